import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, positiveInt } from '@stoa/config';
import type { ToolSpec } from '@stoa/kernel';
import { buildCatalog, loadManifest } from './manifest';
import { discoverSkills } from './skills';
import type { DomainCatalog } from './tools.types';

/** `tools:` in server.yaml: a manifest file (or inline list), the default package and Python paths. */
export const toolsConfigSchema = z
  .strictObject({
    /** Tool manifest YAML, relative to server.yaml. */
    manifest: z.string().optional(),
    /** Inline manifest (`states`, `tools`) instead of a file. */
    inline: z.unknown().optional(),
    /** Default module package: a tool without `module` is `{package}.{name}`. */
    package: z.string().optional(),
    /** Directories added to the kernels' PYTHONPATH (relative to server.yaml); default: the manifest's directory. */
    python_path: z.array(z.string()).optional(),
  })
  .prefault({});

/** `skills:` in server.yaml. */
export const skillsConfigSchema = z
  .strictObject({
    /** Directory of markdown skills (relative to server.yaml). */
    dir: z.string().optional(),
    /** Domain of these skills; default: the name of the skills directory's parent. */
    domain: z.string().optional(),
  })
  .prefault({});

/** `search:` in server.yaml (executor and router): bounds that keep one `search_*_tools` call cheap. */
export const searchConfigSchema = z
  .object({
    /** Longest query accepted, in characters; longer ones are refused with the limit. */
    max_query_chars: positiveInt.default(1000).meta({ env: 'STOA_SEARCH_MAX_QUERY_CHARS' }),
    /** Longest word (a run of letters and digits) accepted in a query. */
    max_term_chars: positiveInt.default(64).meta({ env: 'STOA_SEARCH_MAX_TERM_CHARS' }),
  })
  .prefault({});
export type SearchConfig = z.output<typeof searchConfigSchema>;

export interface LoadedDomain {
  catalog: DomainCatalog;
  /** Absolute directories for the kernels' PYTHONPATH. */
  pythonPath: string[];
}

/** Builds the server's tools, states and skills from config; every problem is reported with its source. */
export function loadDomain(
  serverName: string,
  tools: z.output<typeof toolsConfigSchema>,
  skills: z.output<typeof skillsConfigSchema>,
  baseDir: string,
): LoadedDomain {
  let defs: ReturnType<typeof buildCatalog> = { tools: [], states: [] };
  let pythonPath: string[] = [];
  if (tools.manifest && tools.inline)
    throw new ConfigError('server.yaml', ['tools: set either manifest or inline, not both']);
  if (tools.manifest) {
    const file = resolve(baseDir, tools.manifest);
    if (!existsSync(file)) throw new ConfigError('server.yaml', [`tools.manifest: file not found: ${file}`]);
    defs = loadManifest(file, tools.package);
    pythonPath = [dirname(file)];
  } else if (tools.inline !== undefined) {
    defs = buildCatalog(tools.inline, 'server.yaml tools.inline', tools.package);
    pythonPath = [baseDir];
  }
  if (tools.python_path) pythonPath = tools.python_path.map((p) => resolve(baseDir, p));
  let skillDefs: DomainCatalog['skills'] = [];
  if (skills.dir) {
    const dir = resolve(baseDir, skills.dir);
    if (!existsSync(dir)) throw new ConfigError('server.yaml', [`skills.dir: directory not found: ${dir}`]);
    skillDefs = discoverSkills(dir, skills.domain);
  }
  return { catalog: { serverName, tools: defs.tools, states: defs.states, skills: skillDefs }, pythonPath };
}

/** What the kernel driver needs to build proxies. */
export function kernelToolSpecs(catalog: DomainCatalog): ToolSpec[] {
  return catalog.tools.map((t) => ({
    name: t.name,
    description: t.description,
    module: t.module,
    parameters: t.parameters,
    returns: t.returns,
  }));
}
