import type { CallToolResult, InputRequest, McpServer, ServerContext } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import { z } from 'zod';
import type { CompletionProvider, PromptProvider } from './prompts';
import type { McpResource, ResourceProvider } from './resources';
import type { SkillProvider } from './skills-extension';

/** MCP log levels (RFC 5424 severities), lowest first. */
export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** What a tool handler knows about its call. */
export interface ToolContext {
  principal: Principal;
  /** `Mcp-Session-Id` of a 2025-era sessionful client (or the stdio connection's id); undefined for stateless 2026-07-28 HTTP clients. */
  transportSessionId?: string;
  /** Aborted when the client cancels or disconnects. */
  signal: AbortSignal;
  /** The caller is a 2026-07-28 client that declared the Tasks extension: long work may answer with a task. */
  tasksSupported: boolean;
  /** Present when the caller asked for progress. */
  progress?: (progress: number, message?: string, total?: number) => Promise<void>;
  /** Domain-function policy set by a gateway in front of this server (`X-Stoa-Function-Policy`). */
  functionPolicy?: { allowed?: string[]; blocked?: string[] };
  /**
   * Sends `notifications/message` for this call when the client asked for logs at `level` or below: 2025-era
   * clients by `logging/setLevel` (per MCP session), 2026-07-28 clients by the log-level `_meta` of the request.
   * Otherwise (and when the client left) it does nothing.
   */
  log: (level: LogLevel, data: unknown, logger?: string) => Promise<void>;
  /**
   * The lowest level `log` may send this caller (a connector asks its upstream for logs from there): the
   * 2026-07-28 request's log-level `_meta`; `debug` for a 2025-era session (its logging/setLevel filters in `log`);
   * undefined when the caller gets none.
   */
  logLevel?: LogLevel;
}

/** One MCP tool: name, description, zod input schema and handler. Handlers return JSON-able values or text. */
export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  /** A proxied tool: this JSON Schema is listed verbatim and arguments pass unvalidated (the upstream validates). */
  inputJsonSchema?: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
    title?: string;
  };
  handler: (args: z.output<S>, ctx: ToolContext) => Promise<unknown>;
}

/** Typed helper to declare a tool (keeps the handler's args typed by its schema). */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition {
  return def;
}

/** A task as the Tasks extension (2026-07-28) shows it. */
export interface TaskView {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  statusMessage?: string;
  /** Completed: the tool result (text content). */
  result?: { text: string; isError?: boolean };
  /** Failed: a JSON-RPC error. */
  error?: { code: number; message: string; data?: unknown };
  /** Input required: what the task waits for, by key (answered with tasks/update `inputResponses`). */
  inputRequests?: Record<string, InputRequest>;
}

/** Returned by a tool handler to answer a `tools/call` with a task instead of a result. */
export class TaskCreated {
  constructor(readonly task: TaskView) {}
}

/** Where `tasks/get`, `tasks/update` and `tasks/cancel` look tasks up (scoped to the caller; foreign ids look unknown). */
export interface TaskBackend {
  get(principal: Principal, taskId: string): Promise<TaskView | undefined>;
  cancel(principal: Principal, taskId: string): Promise<TaskView | undefined>;
  /** Delivers input to a task (keys it does not wait for are ignored); without it, tasks take no input. */
  update?(principal: Principal, taskId: string, inputResponses: Record<string, unknown>): Promise<TaskView | undefined>;
  /**
   * Calls `listener` with the task's view now and on every change until the returned stop is called; undefined when
   * the caller has no such task. Without it, `subscriptions/listen` streams poll get() (see watchTask).
   */
  watch?(principal: Principal, taskId: string, listener: TaskListener): Promise<(() => void) | undefined>;
}

/** Told a task's view (`notifications/tasks` carries it). */
export type TaskListener = (task: TaskView) => void;

/** What a task's work is given: a signal aborted by tasks/cancel, and a way to ask the client for input. */
export interface TaskRun {
  readonly signal: AbortSignal;
  /**
   * Parks the task in `input_required` with `requests` (key → embedded request) until the client answered every
   * key with tasks/update; resolves with the responses by key. Concurrent calls add to the pending keys.
   */
  input(requests: Record<string, InputRequest>): Promise<Record<string, unknown>>;
}

/** How a task's work ends: its tool result (`isError` for a tool error). Throwing fails the task instead. */
export type TaskOutcome = NonNullable<TaskView['result']>;

/** What {@link McpServerSpec.extend} gets besides the server: tools that run as in-process tasks. */
export interface McpExtensionKit {
  /**
   * Answers a tools/call with `work` run as a task of the caller when the request declared the Tasks extension
   * (polled with tasks/get), else runs it inline and answers with its result.
   */
  task(ctx: ServerContext, work: (run: TaskRun) => Promise<TaskOutcome>): Promise<CallToolResult>;
  /** Tools that only run as tasks: a tools/call without the Tasks extension answers -32021 before their handler. */
  requireTasks(...tools: string[]): void;
  /**
   * Runs `check` before `tool`'s handler on every tools/call of it: what it throws (a ProtocolError, e.g. -32021 or
   * -32602) is the call's JSON-RPC error, where a throw from the handler would be an isError tool result.
   */
  guard(tool: string, check: (ctx: ServerContext) => void): void;
}

/** What an app serving MCP provides: server identity and its tools (evaluated per request). */
export interface McpServerSpec {
  name: string;
  version: string;
  instructions?: string;
  tools: () => readonly ToolDefinition[];
  /** Enables the Tasks extension for 2026-07-28 clients that declare it. */
  tasks?: TaskBackend;
  /** Serves MCP resources (declares the `resources` capability). */
  resources?: ResourceProvider;
  /** Serves MCP prompts (declares `prompts` while the provider has any to serve). */
  prompts?: PromptProvider;
  /** Serves `completion/complete` (declares `completions` while the provider can answer). */
  completions?: CompletionProvider;
  /** Serves the Skills extension (SEP-2640); its files must be readable through `resources`. */
  skills?: SkillProvider;
  /** Resources a tool result's value refers to, added to the result as `resource_link` content. */
  resultLinks?: (value: unknown) => McpResource[];
  /**
   * Registers more on each MCP server instance (one per 2025-era session or 2026-07-28 request) after the tools:
   * resources, prompts, extra methods, capabilities, tools run as tasks (`kit`). Used by profiles such as the
   * conformance fixtures, and by connectors for what their upstreams declare.
   */
  extend?: (server: McpServer, era: 'legacy' | 'modern', kit: McpExtensionKit) => void;
}

/** An integer argument whose JSON Schema stays `{"type": "number"}` (zod's .int() adds ±2^53 bounds that cost tokens in tools/list). */
export function integer(): z.ZodNumber {
  return z.number().refine(Number.isInteger, 'must be a whole number');
}

/**
 * Returned by a handler when the tool itself failed (unknown skill, refused argument, failed send): the body is
 * the reference's JSON as usual, and the result is flagged `isError` so clients that rely on the flag see it.
 * A failure of the user's code (a Python exception) is a normal result, not a ToolFailure.
 */
export class ToolFailure {
  constructor(readonly body: Record<string, unknown>) {}
}

/** Returned by a handler to answer with a tool result exactly as given (a proxied upstream result). */
export class RawToolResult {
  constructor(readonly result: Record<string, unknown>) {}
}
