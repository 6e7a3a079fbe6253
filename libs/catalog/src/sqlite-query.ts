import { fork } from 'node:child_process';
import { siblingModule } from '@stoa/core';
import { CatalogQueryError, CatalogQueryRefusedError } from './catalog.errors';
import { ARTIFACTS, ARTIFACTS_FTS } from './catalog.migrations';
import type { QueryReply, QueryRequest } from './sqlite-query.child';

export type QueryRow = Record<string, unknown>;

/** The child module beside this one (`sqlite-query.child.ts`), with a heap bound. */
const CHILD = siblingModule(__filename, 'sqlite-query.child');
const CHILD_ARGS = ['--max-old-space-size=256', ...CHILD.execArgv];

/**
 * B-trees query_catalog may open on SQLite: the schema, the artifacts and the FTS5 shadow tables. (Virtual tables are
 * opened by pointer, not name, so they are not checked here; the only one in the database is the catalog's own.)
 */
const READABLE = [
  'sqlite_schema',
  ARTIFACTS,
  ...['', '_data', '_idx', '_docsize', '_config'].map((s) => ARTIFACTS_FTS + s),
];

/**
 * query_catalog on SQLite: each statement runs in a short-lived child process, so a runaway query (better-sqlite3 is
 * synchronous and cannot be interrupted) is killed at the time limit instead of freezing the server.
 */
export class SqliteReadOnlyQuery {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly file: string,
    private readonly timeoutMs: number,
    private readonly maxParallel = 4,
  ) {}

  async run(sql: string, maxRows: number): Promise<QueryRow[]> {
    if (this.running < this.maxParallel) this.running++;
    else await new Promise<void>((r) => this.waiting.push(r)); // a finishing query hands its slot over
    try {
      return result(await this.child(sql, maxRows), this.timeoutMs);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private child(sql: string, maxRows: number): Promise<QueryReply | 'timeout'> {
    // Our child needs no loaders or flags a dev shell may have set.
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const child = fork(CHILD.file, [this.file], {
      execArgv: CHILD_ARGS,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env,
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('timeout');
      }, this.timeoutMs);
      child.once('message', (m) => {
        clearTimeout(timer);
        resolve(m as QueryReply);
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new CatalogQueryError(
            `The query process ended without an answer (${signal ?? `exit ${code}`}): ${stderr.trim() || 'no output'}`,
          ),
        );
      });
      const request: QueryRequest = { sql, maxRows, allowed: READABLE };
      child.send(request);
    });
  }
}

function result(reply: QueryReply | 'timeout', timeoutMs: number): QueryRow[] {
  if (reply === 'timeout') throw timedOut(timeoutMs);
  if ('rows' in reply) return reply.rows;
  if ('refused' in reply) {
    if (reply.refused === 'table') throw tableRefused(reply.table);
    throw new CatalogQueryRefusedError(
      'query_catalog runs one read-only query that returns rows (SELECT …, WITH … SELECT …); this statement returns none.',
    );
  }
  if (reply.code?.startsWith('SQLITE_READONLY')) throw writeRefused(reply.error);
  throw new CatalogQueryError(`Query failed: ${reply.error}. ${SCHEMA_HINT}`);
}

export const SCHEMA_HINT = `query_catalog runs one read-only SELECT over ${ARTIFACTS}(id, name, storage_uri, description, domain, source_type, content_type, size_bytes, indexed_at).`;

export function timedOut(ms: number): CatalogQueryError {
  return new CatalogQueryError(
    `Query took longer than ${ms / 1000} s and was stopped. Narrow it (WHERE, LIMIT, fewer joins) and retry.`,
  );
}

export function writeRefused(detail: string): CatalogQueryRefusedError {
  return new CatalogQueryRefusedError(`Write operations are not permitted: the catalog is read-only (${detail}).`);
}

export function tableRefused(table: string): CatalogQueryRefusedError {
  return new CatalogQueryRefusedError(
    `query_catalog reads only the catalog (${ARTIFACTS}, ${ARTIFACTS_FTS}); '${table}' is not part of it. ${SCHEMA_HINT}`,
  );
}
