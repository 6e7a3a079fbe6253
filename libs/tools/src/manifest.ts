import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '@stoa/config';
import type { StateSpec, ToolDef } from './tools.types';

const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a Python identifier');
const typeName = z.string().regex(/^[A-Za-z_][\w.:]*$/, 'must be a type name such as str, int, list or networkx.Graph');
const token = z.string().regex(/^[\w-]+(\.[\w-]+)+$/, "must be a state token like 'domain.state_name'");

const parameterSchema = z
  .object({
    name: identifier,
    type: typeName.default('str'),
    description: z.string().default(''),
    required: z.boolean().optional(),
    default: z.unknown().optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.required === true && p.default !== undefined)
      ctx.addIssue({ code: 'custom', message: 'a required parameter cannot have a default' });
  });

const returnSchema = z
  .object({ name: z.string().default('result'), type: typeName.default('dict'), description: z.string().default('') })
  .strict();

const toolSchema = z
  .object({
    name: identifier,
    description: z.string().min(1, 'describe what the tool does (agents search on it)'),
    parameters: z.array(parameterSchema).default([]),
    returns: z.union([returnSchema, z.array(returnSchema)]).default([]),
    module: z
      .string()
      .regex(/^[A-Za-z_][\w.]*$/, 'must be a dotted Python module path')
      .optional(),
    requires: z.array(token).default([]),
    produces: z.array(token).default([]),
    affordances: z.array(z.string()).default([]),
  })
  .strict();

const stateSchema = z
  .object({ token, description: z.string().default(''), affordances: z.array(z.string()).default([]) })
  .strict();

/** A tool manifest file: `package`, `states`, `tools`. */
export const manifestSchema = z
  .object({
    package: z.string().optional(),
    states: z.array(stateSchema).default([]),
    tools: z.array(toolSchema).default([]),
  })
  .strict();
export type Manifest = z.output<typeof manifestSchema>;

/** Reads and validates a manifest; every problem is reported at once with its key path. */
export function loadManifest(file: string, packageOverride?: string): { tools: ToolDef[]; states: StateSpec[] } {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new ConfigError(file, [`cannot read the tool manifest: ${(err as Error).message}`]);
  }
  return buildCatalog(doc, file, packageOverride);
}

/** Validates manifest data (from a file or inline YAML) and resolves modules. */
export function buildCatalog(
  doc: unknown,
  source: string,
  packageOverride?: string,
): { tools: ToolDef[]; states: StateSpec[] } {
  const parsed = manifestSchema.safeParse(doc);
  if (!parsed.success) {
    throw new ConfigError(
      source,
      parsed.error.issues.map((i) => `${describePath(doc, i.path)}: ${i.message}`),
    );
  }
  const m = parsed.data;
  const pkg = packageOverride ?? m.package;
  const problems: string[] = [];
  const seen = new Set<string>();
  const tools = m.tools.map((t, id): ToolDef => {
    if (seen.has(t.name)) problems.push(`tools[${id}] (${t.name}): duplicate tool name`);
    seen.add(t.name);
    const params = new Set<string>();
    for (const p of t.parameters) {
      if (params.has(p.name)) problems.push(`tools[${id}] (${t.name}): duplicate parameter '${p.name}'`);
      params.add(p.name);
    }
    const module = t.module ?? (pkg ? `${pkg}.${t.name}` : undefined);
    if (!module) {
      problems.push(
        `tools[${id}] (${t.name}): Tool '${t.name}' has no module and the manifest has no default package. Set 'module' on the tool or 'package' in the manifest (or tools.package in server.yaml).`,
      );
    }
    return {
      id,
      name: t.name,
      description: t.description.trim(),
      parameters: t.parameters.map((p) => ({
        name: p.name,
        type: p.type,
        description: p.description,
        required: p.required ?? p.default === undefined,
        default: p.default ?? (p.required === false ? null : undefined),
      })),
      returns: Array.isArray(t.returns) ? t.returns : [t.returns],
      module: module ?? '',
      requires: [...new Set(t.requires)].sort(),
      produces: [...new Set(t.produces)].sort(),
      affordances: t.affordances,
    };
  });
  const tokens = new Set<string>();
  for (const s of m.states) {
    if (tokens.has(s.token)) problems.push(`states: duplicate token '${s.token}'`);
    tokens.add(s.token);
  }
  if (problems.length) throw new ConfigError(source, problems);
  return { tools, states: m.states };
}

function describePath(doc: unknown, path: PropertyKey[]): string {
  let node: unknown = doc;
  let out = '';
  for (const key of path) {
    out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
    node = node && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    if (
      typeof key === 'number' &&
      node &&
      typeof node === 'object' &&
      typeof (node as { name?: unknown }).name === 'string'
    ) {
      out += ` (${(node as { name: string }).name})`;
    }
  }
  return out || '(root)';
}
