import { InvalidInputError } from '@stoa/core';
import { z } from 'zod';
import { upstreamUrls } from './upstream-url';
import {
  ProtocolMode,
  type HeadersSource,
  type MultiServerSessionOptions,
  type ResolvedSessionOptions,
  type ServerSpec,
} from './multi-server.types';
import { SERVER_NAME_PATTERN } from './tool-names';

const serverSpecSchema = z.object({
  name: z
    .string()
    .regex(
      SERVER_NAME_PATTERN,
      'use letters, digits, - and single inner underscores (it prefixes tool names as <name>__<tool>)',
    ),
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:8000 or …/mcp' }),
  headers: z
    .union([
      z.record(z.string(), z.string()),
      z.custom<() => Promise<Record<string, string>>>((v) => typeof v === 'function'),
    ])
    .optional(),
  roles: z.array(z.string().min(1)).optional(),
});

const optionsSchema = z.object({
  role: z.string().min(1).optional(),
  reconnectBaseMs: z.number().int().positive().default(1000),
  healthIntervalMs: z.number().int().positive().default(15_000),
  connectTimeoutMs: z.number().int().positive().default(10_000),
  era: z.enum(ProtocolMode).default(ProtocolMode.auto),
});

/** A validated server with its MCP endpoint resolved. */
export interface ResolvedServer {
  name: string;
  /** Always ends with `/mcp`. */
  mcpUrl: string;
  headers: HeadersSource | undefined;
}

/** Validates options; throws one `InvalidInputError` listing every bad key. */
export function resolveOptions(opts: MultiServerSessionOptions = {}): ResolvedSessionOptions & { role?: string } {
  const parsed = optionsSchema.safeParse(opts);
  if (!parsed.success) throw invalid('MultiServerSession options', parsed.error);
  return parsed.data;
}

/**
 * Validates `servers`, keeps those matching `role` (servers without roles serve every role) and resolves
 * their endpoints. Throws when a spec is bad, names repeat, or the role leaves no server.
 */
export function selectServers(servers: readonly ServerSpec[], role: string | undefined): ResolvedServer[] {
  const parsed = z.array(serverSpecSchema).min(1, 'give at least one server').safeParse(servers);
  if (!parsed.success) throw invalid('MultiServerSession servers', parsed.error);
  const seen = new Set<string>();
  for (const s of parsed.data) {
    if (seen.has(s.name))
      throw new InvalidInputError(
        `Two servers are named "${s.name}"; server names must be unique (they prefix tool names).`,
      );
    seen.add(s.name);
  }
  const selected = parsed.data.filter((s) => role === undefined || !s.roles?.length || s.roles.includes(role));
  if (!selected.length) {
    const roles = [...new Set(parsed.data.flatMap((s) => s.roles ?? []))].sort();
    throw new InvalidInputError(`No server serves role "${role}". Roles declared: ${roles.join(', ') || '(none)'}.`, {
      role,
      roles,
    });
  }
  return selected.map((s) => ({ name: s.name, mcpUrl: mcpEndpoint(s.url), headers: s.headers }));
}

/** `http://h:8000`, `http://h:8000/`, `http://h:8000/mcp` and `http://h:8000/mcp/` all give `http://h:8000/mcp`. */
export function mcpEndpoint(url: string): string {
  return `${upstreamUrls(url).mcp}${new URL(url).search}`;
}

function invalid(what: string, error: z.ZodError): InvalidInputError {
  const problems = error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
  return new InvalidInputError(`Invalid ${what}: ${problems.join('; ')}.`, { problems });
}
