import { createHash } from 'node:crypto';
import type { DomainCatalog, ParameterSpec, SkillDef, StateSpec, ToolDef } from '@stoa/tools';

/** An MCP tool as an upstream lists it (schemas kept verbatim). */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** What the pool knows about an upstream's offer. */
export interface UpstreamCatalog {
  /** The name the upstream server gives itself (tool names derive from it, not from our config key). */
  serverName: string;
  mcpTools: McpToolInfo[];
  /** Domain tools, states and skills (for search, skills and planning). */
  domain: DomainCatalog;
  /** Changes whenever the upstream's offer changes. */
  version: string;
}

interface CatalogParam {
  name: string;
  type?: string;
  description?: string;
  default?: unknown;
}

interface CatalogTool {
  name: string;
  description?: string;
  required_parameters?: CatalogParam[];
  optional_parameters?: CatalogParam[];
  return_spec?: { name?: string; type?: string; description?: string }[];
  module?: string;
  state_transition?: { requires?: string[]; produces?: string[] };
  affordances?: string[];
}

interface CatalogDoc {
  server_name?: string;
  tools?: CatalogTool[];
  skills?: { name?: string; description?: string; domain?: string; states?: string[] }[];
  states?: StateSpec[];
  mcp_tools?: McpToolInfo[];
}

const shortType = (t = 'object'): string => t.replace(/^builtins\./, '');

/** Parses an upstream's `GET /catalog` (types stay opaque strings; never imported), applying expose/alias rules. */
export function parseCatalog(
  raw: unknown,
  fallbackName: string,
  rules: { expose: string[] | null; aliases: Record<string, string> },
): Omit<UpstreamCatalog, 'mcpTools'> & { mcpTools?: McpToolInfo[] } {
  const doc = (raw ?? {}) as CatalogDoc;
  const serverName = doc.server_name || fallbackName;
  const param =
    (required: boolean) =>
    (p: CatalogParam): ParameterSpec => ({
      name: p.name,
      type: shortType(p.type),
      description: p.description ?? '',
      required,
      default: required ? undefined : p.default,
    });
  const tools: ToolDef[] = (doc.tools ?? [])
    .filter((t) => typeof t?.name === 'string' && exposed(t.name, rules.expose))
    .map((t, id) => ({
      id,
      name: rules.aliases[t.name] ?? t.name,
      description: t.description ?? '',
      parameters: [
        ...(t.required_parameters ?? []).map(param(true)),
        ...(t.optional_parameters ?? []).map(param(false)),
      ],
      returns: (t.return_spec ?? []).map((r) => ({
        name: r.name ?? 'result',
        type: shortType(r.type),
        description: r.description ?? '',
      })),
      module: t.module ?? '',
      requires: t.state_transition?.requires ?? [],
      produces: t.state_transition?.produces ?? [],
      affordances: t.affordances ?? [],
    }));
  const skills: SkillDef[] = (doc.skills ?? [])
    .filter((s) => typeof s?.name === 'string')
    .map((s) => ({
      name: s.name as string,
      description: s.description ?? '',
      domain: s.domain ?? serverName,
      states: s.states ?? [],
      content: '',
      path: '',
    }));
  return {
    serverName,
    domain: { serverName, tools, skills, states: Array.isArray(doc.states) ? doc.states : [] },
    mcpTools: Array.isArray(doc.mcp_tools) ? doc.mcp_tools : undefined,
    version: createHash('sha256')
      .update(JSON.stringify(raw ?? null))
      .digest('hex')
      .slice(0, 16),
  };
}

/** fnmatch-style glob (`*`, `?`, `[…]`) on a whole name; null or ["*"] exposes everything. */
export function exposed(name: string, patterns: string[] | null): boolean {
  if (!patterns || patterns.includes('*')) return true;
  return patterns.some((p) => globToRegExp(p).test(name));
}

export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        const body = glob.slice(i + 1, end);
        re += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
