import { type McpServer, ProtocolError, type ServerContext } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import { type CacheHint, withHint } from './resources';
import { declaredCapabilities } from './tasks';

/** A prompt as `prompts/list` shows it. */
export interface McpPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
  icons?: unknown[];
  _meta?: Record<string, unknown>;
}

/**
 * Who asks for a prompt or a completion, and what the request carries beyond its params: the 2026-07-28
 * multi-round-trip retry fields and the capabilities the caller declared (an upstream checks them before it
 * asks for input).
 */
export interface PromptCaller {
  principal: Principal;
  clientCapabilities: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

/** `prompts/get` params. */
export interface PromptGetParams {
  name: string;
  arguments?: Record<string, string>;
}

/** `completion/complete` params: a prompt's argument or a resource template's variable. */
export interface CompleteParams {
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

/**
 * What an app serves as MCP prompts, looked up for the caller. `available` is asked for every server instance
 * (one per 2025-era session or 2026-07-28 request): the `prompts` capability is declared only while it holds.
 * `get` answers a prompts/get result (messages, or a 2026-07-28 `input_required` result) or undefined for a
 * prompt the caller has not got; it may throw a ProtocolError of its own (a connector relaying an upstream).
 */
export interface PromptProvider {
  available(): boolean;
  list(principal: Principal): Promise<{ prompts: McpPrompt[]; cache: CacheHint }>;
  get(caller: PromptCaller, params: PromptGetParams): Promise<Record<string, unknown> | undefined>;
}

/**
 * `completion/complete` (declares the `completions` capability while `available`). `complete` answers the
 * `completion` object, or undefined for a prompt or template the caller has not got.
 */
export interface CompletionProvider {
  available(): boolean;
  complete(caller: PromptCaller, params: CompleteParams): Promise<Record<string, unknown> | undefined>;
}

/** The error for an unknown (or withheld) prompt: the SDK's own answer (-32602 `Prompt {name} not found`). */
export function promptNotFound(name: string): ProtocolError {
  return new ProtocolError(-32602, `Prompt ${name} not found`);
}

/** The error for a completion of an unknown prompt or resource template (the SDK's own answers). */
function refNotFound(ref: CompleteParams['ref']): ProtocolError {
  return ref.type === 'ref/prompt'
    ? promptNotFound(ref.name)
    : new ProtocolError(-32602, `Resource template ${ref.uri} not found`);
}

/**
 * `prompts/list` and `prompts/get` from `prompts`, `completion/complete` from `completions`, each registered (and
 * its capability declared) only when available. The list's cache hint goes on 2026-07-28 results only.
 */
export function registerPromptMethods(
  server: McpServer,
  era: 'legacy' | 'modern',
  providers: { prompts?: PromptProvider; completions?: CompletionProvider },
  principalOf: (ctx: ServerContext) => Principal,
): void {
  const { prompts, completions } = providers;
  const caller = (ctx: ServerContext): PromptCaller => ({
    principal: principalOf(ctx),
    clientCapabilities: clientCapabilities(server, era, ctx),
    inputResponses: ctx.mcpReq.inputResponses,
    requestState: stringOrUndefined(ctx.mcpReq.requestState()),
  });
  if (prompts?.available()) {
    server.server.registerCapabilities({ prompts: {} });
    server.server.setRequestHandler('prompts/list', async (_req, ctx) => {
      const listed = await prompts.list(principalOf(ctx));
      return withHint({ prompts: listed.prompts as never[] }, listed.cache, era);
    });
    server.server.setRequestHandler('prompts/get', async (req, ctx) => {
      const params = { name: req.params.name, arguments: req.params.arguments };
      const found = await prompts.get(caller(ctx), params);
      if (!found) throw promptNotFound(params.name);
      return found as never;
    });
  }
  if (completions?.available()) {
    server.server.registerCapabilities({ completions: {} });
    server.server.setRequestHandler('completion/complete', async (req, ctx) => {
      const params = req.params as CompleteParams;
      const completion = await completions.complete(caller(ctx), params);
      if (!completion) throw refNotFound(params.ref);
      return { completion } as never;
    });
  }
}

/** The capabilities the caller declared: a 2026-07-28 request's envelope, a 2025-era session's initialize. */
function clientCapabilities(server: McpServer, era: 'legacy' | 'modern', ctx: ServerContext): Record<string, unknown> {
  if (era === 'modern') return declaredCapabilities(ctx.mcpReq.envelope);
  return { ...server.server.getClientCapabilities() };
}

function stringOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
