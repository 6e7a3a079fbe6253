import { pyRepr } from '@stoa/core';
import type { DomainCatalog, ParameterSpec, ToolDef } from './tools.types';

const shortType = (t: string): string => t.split(/[.:]/).pop() ?? t;

function params(ps: ParameterSpec[]): string {
  const ordered = [...ps.filter((p) => p.required), ...ps.filter((p) => !p.required)];
  return ordered
    .map((p) =>
      p.required ? `${p.name}: ${shortType(p.type)}` : `${p.name}: ${shortType(p.type)} = ${pyRepr(p.default)}`,
    )
    .join(', ');
}

/** The execute description's catalogue block (reference §1.2 (d)). */
export function toolCatalogueText(tools: readonly ToolDef[]): string {
  if (!tools.length) return '';
  const lines = tools.map((t) => `  - ${t.name}(${params(t.parameters)}): ${t.description.split('\n')[0] ?? ''}`);
  return `Available tool functions (call directly in your code):\n${lines.join('\n')}\n\nCall list_tools() in your code for full signatures and documentation.`;
}

const qualified = (t: string): string =>
  ['str', 'int', 'float', 'bool', 'dict', 'list', 'tuple', 'set', 'bytes'].includes(t) ? `builtins.${t}` : t;

/** `GET /catalog`: server name, tools (reference ToolDefinition JSON, types as strings), skills and states. */
export function catalogJson(c: DomainCatalog): Record<string, unknown> {
  const param = (p: ParameterSpec) => ({
    name: p.name,
    type: qualified(p.type),
    description: p.description,
    default: p.default ?? null,
  });
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
