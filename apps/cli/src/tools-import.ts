import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { parse as parseYaml, stringify } from 'yaml';
import { ConfigError } from '@stoa/config';
import { buildCatalog } from '@stoa/tools';
import { cliAsset } from './assets';
import { CliError } from './cli.errors';

export interface ToolsImportOptions {
  module: string;
  /** Manifest to write (merged: tools of the same name are replaced, the rest kept). */
  out: string;
  /** Directories put first on sys.path while importing (default: the working directory). */
  paths: string[];
  python: string;
}

interface Introspected {
  module: string;
  tools: { name: string }[];
  warnings: string[];
}

/** Imports the module in Python, describes its public functions, merges them into the manifest, validates, writes. */
export async function importTools(o: ToolsImportOptions): Promise<{ tools: string[]; warnings: string[] }> {
  const found = await introspect(o);
  if (!found.tools.length)
    throw new CliError(`${o.module} defines no public function (names without a leading _): nothing to import.`);
  const doc = existsSync(o.out) ? readManifest(o.out) : {};
  const imported = new Set(found.tools.map((t) => t.name));
  const kept = (Array.isArray(doc.tools) ? (doc.tools as { name?: unknown }[]) : []).filter(
    (t) => typeof t.name !== 'string' || !imported.has(t.name),
  );
  doc.tools = [...kept, ...found.tools];
  try {
    buildCatalog(doc, o.out);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new CliError(
        `The merged manifest would be invalid, ${o.out} left unchanged:\n  - ${err.problems.join('\n  - ')}`,
      );
    throw err;
  }
  writeFileSync(o.out, stringify(doc, { lineWidth: 120 }));
  return { tools: [...imported], warnings: found.warnings };
}

async function introspect(o: ToolsImportOptions): Promise<Introspected> {
  const script = cliAsset('python/stoa_introspect.py');
  try {
    const { stdout } = await promisify(execFile)(o.python, [script, o.module, ...o.paths], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    });
    return JSON.parse(stdout) as Introspected;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new CliError(`${o.python} not found: pass --python <interpreter>.`);
    const last = (e.stderr ?? e.message).trim().split('\n').pop();
    throw new CliError(
      `Importing ${o.module} with ${o.python} failed: ${last}. Check the module name, --path (the directory that contains it) and that its imports are installed for that interpreter.`,
    );
  }
}

function readManifest(file: string): Record<string, unknown> {
  const doc: unknown = parseYaml(readFileSync(file, 'utf8')) ?? {};
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CliError(`${file} is not a tool manifest (a YAML mapping with package, states, tools).`);
  return doc as Record<string, unknown>;
}
