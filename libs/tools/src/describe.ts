import type { DomainCatalog, ParameterSpec, ToolDef } from './tools.types';

/** Python `repr` of a JSON-ish default value (for signatures shown to agents). */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  return JSON.stringify(v);
}

const shortType = (t: string): string => t.split(/[.:]/).pop() ?? t;

function params(ps: ParameterSpec[]): string {
  const ordered = [...ps.filter((p) => p.required), ...ps.filter((p) => !p.required)];
  return ordered.map((p) => (p.required ? `${p.name}: ${shortType(p.type)}` : `${p.name}: ${shortType(p.type)} = ${pyRepr(p.default)}`)).join(', ');
}

/** The execute description's catalogue block (reference §1.2 (d)). */
export function toolCatalogueText(tools: readonly ToolDef[]): string {
  if (!tools.length) return '';
  const lines = tools.map((t) => `  - ${t.name}(${params(t.parameters)}): ${t.description.split('\n')[0] ?? ''}`);
  return `Available tool functions (call directly in your code):\n${lines.join('\n')}\n\nCall list_tools() in your code for full signatures and documentation.`;
}

const qualified = (t: string): string => (['str', 'int', 'float', 'bool', 'dict', 'list', 'tuple', 'set', 'bytes'].includes(t) ? `builtins.${t}` : t);

/** `GET /catalog`: server name, tools (reference ToolDefinition JSON, types as strings), skills and states. */
export function catalogJson(c: DomainCatalog): Record<string, unknown> {
  const param = (p: ParameterSpec) => ({ name: p.name, type: qualified(p.type), description: p.description, default: p.default ?? null });
  return {
    server_name: c.serverName,
    tools: c.tools.map((t) => ({
      name: t.name,
      description: t.description,
      required_parameters: t.parameters.filter((p) => p.required).map(param),
      optional_parameters: t.parameters.filter((p) => !p.required).map(param),
      return_spec: t.returns.map((r) => ({ name: r.name, type: qualified(r.type), description: r.description })),
      module: t.module,
      server_name: null,
      state_transition: { requires: t.requires, produces: t.produces },
      affordances: t.affordances,
      id: t.id,
    })),
    skills: c.skills.map((s) => ({ name: s.name, description: s.description, domain: s.domain, states: s.states })),
    states: c.states,
  };
}
