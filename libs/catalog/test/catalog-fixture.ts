import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { CATALOG_MIGRATIONS, type CatalogSettings, type CatalogSource } from '@stoa/catalog';
import { DEV_PRINCIPAL_ID } from '@stoa/core';
import { ToolFailure, type ToolContext, type ToolDefinition } from '@stoa/mcp';
import { buildDataSourceOptions, ensurePostgresSchema } from '@stoa/persistence';
import type { DbTarget } from '../../../test/support/databases';

/** A DataSource on the suite's database with the catalog migrations run (what PersistenceModule would open). */
export async function openCatalogDb(db: DbTarget): Promise<DataSource> {
  if (db.name === 'postgres') await ensurePostgresSchema(db.database.url as string, db.database.schema as string);
  return new DataSource(
    buildDataSourceOptions({
      database: db.database,
      defaultSqlitePath: db.defaultSqlitePath,
      migrations: [...CATALOG_MIGRATIONS],
    }),
  ).initialize();
}

export function settings(sources: CatalogSource[], over: Partial<CatalogSettings> = {}): CatalogSettings {
  return { sources, indexOnStart: false, queryTimeoutMs: 10_000, ...over };
}

/** A temp directory holding `files` (relative path → content); returns its absolute path. */
export function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'stoa-catalog-'));
  for (const [rel, content] of Object.entries(files)) writeFile(join(root, rel), content);
  return root;
}

export function writeFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

export type ToolCall = (name: string, args?: Record<string, unknown>) => Promise<unknown>;

const ctx: ToolContext = {
  principal: { id: DEV_PRINCIPAL_ID, roles: [], scopes: [], source: 'noop' },
  signal: new AbortController().signal,
  tasksSupported: false,
  log: () => Promise.resolve(),
};

/** Calls a tool as the MCP endpoint would: arguments validated by its zod schema first. */
export function callTool(tools: readonly ToolDefinition[]): ToolCall {
  return async (name, args = {}) => {
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    // A tool failure (isError: true on the wire) is compared by its JSON body, tagged so tests see it failed.
    const out = await tool.handler(tool.input.parse(args), ctx);
    return out instanceof ToolFailure ? { ...out.body, tool_failure: true } : out;
  };
}
