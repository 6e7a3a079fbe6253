import { spawn } from 'node:child_process';
import { CatalogQueryError, CatalogQueryRefusedError } from './catalog.errors';
import { ARTIFACTS, ARTIFACTS_FTS } from './catalog.migrations';

export type QueryRow = Record<string, unknown>;

/**
 * Runs in a child Node process (plain JavaScript: it is passed to `node -e`). It opens its own read-only
 * better-sqlite3 connection on the database file, refuses statements that return no rows (VACUUM INTO or ATTACH
 * work even on a read-only connection) and statements whose bytecode opens a b-tree of any table but the catalog's
 * (the file also holds sessions and jobs of every user), then fetches at most maxRows rows.
 */
const CHILD = String.raw`'use strict';
const [, modulePath, file] = process.argv;
const OPEN = new Set(['OpenRead', 'OpenWrite', 'ReopenIdx']);
const EXPLAIN = /^\s*(?:(?:--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)\s*)*explain\b/i;
const plain = (row) => {
  for (const k of Object.keys(row)) if (row[k] instanceof Uint8Array) row[k] = Buffer.from(row[k]).toString('base64');
  return row;
};
process.once('message', (req) => {
  const reply = (msg) => process.send(msg, () => process.exit(0));
  let db;
  try {
    db = new (require(modulePath))(file, { readonly: true, fileMustExist: true, timeout: 250 });
    const stmt = db.prepare(req.sql);
    if (!stmt.reader) return reply({ refused: 'not_a_query' });
    if (!EXPLAIN.test(req.sql)) {
      const tables = new Map(db.prepare('SELECT rootpage, tbl_name FROM sqlite_schema WHERE rootpage > 0').raw().all());
      tables.set(1, 'sqlite_schema');
      for (const op of db.prepare('EXPLAIN ' + req.sql).all()) {
        // p3 is the database (0 main, 1 temp, which a fresh connection has empty); p5 & 0x10: p2 is a register.
        if (!OPEN.has(op.opcode) || op.p3 === 1) continue;
        const table = op.p3 === 0 && !(op.p5 & 0x10) ? tables.get(op.p2) : undefined;
        if (!table || !req.allowed.includes(table)) return reply({ refused: 'table', table: table || '(unknown)' });
      }
    }
    const rows = [];
    for (const row of stmt.iterate()) {
      rows.push(plain(row));
      if (rows.length >= req.maxRows) break;
    }
    reply({ rows });
  } catch (err) {
    reply({ error: String((err && err.message) || err), code: err && err.code });
  } finally {
    if (db) db.close();
  }
});`;

/**
 * B-trees query_catalog may open on SQLite: the schema, the artifacts and the FTS5 shadow tables. (Virtual tables are
 * opened by pointer, not name, so they are not checked here; the only one in the database is the catalog's own.)
 */
const READABLE = ['sqlite_schema', ARTIFACTS, ...['', '_data', '_idx', '_docsize', '_config'].map((s) => ARTIFACTS_FTS + s)];

interface ChildReply {
  rows?: QueryRow[];
  refused?: 'not_a_query' | 'table';
  table?: string;
  error?: string;
  code?: string;
}

/**
 * query_catalog on SQLite: each statement runs in a short-lived child process, so a runaway query (better-sqlite3 is
 * synchronous and cannot be interrupted) is killed at the time limit instead of freezing the server.
 */
export class SqliteReadOnlyQuery {
  private readonly modulePath = require.resolve('better-sqlite3');
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

  private child(sql: string, maxRows: number): Promise<ChildReply | 'timeout'> {
    // Our child needs no loaders or flags a dev shell may have set.
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, ['--max-old-space-size=256', '-e', CHILD, this.modulePath, this.file], {
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
        resolve(m as ChildReply);
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new CatalogQueryError(`The query process ended without an answer (${signal ?? `exit ${code}`}): ${stderr.trim() || 'no output'}`));
      });
      child.send({ sql, maxRows, allowed: READABLE });
    });
  }
}

function result(reply: ChildReply | 'timeout', timeoutMs: number): QueryRow[] {
  if (reply === 'timeout') throw timedOut(timeoutMs);
  if (reply.rows) return reply.rows;
  if (reply.refused === 'not_a_query') {
    throw new CatalogQueryRefusedError('query_catalog runs one read-only query that returns rows (SELECT …, WITH … SELECT …); this statement returns none.');
  }
  if (reply.refused === 'table') throw tableRefused(reply.table ?? '(unknown)');
  if (reply.code?.startsWith('SQLITE_READONLY')) throw writeRefused(reply.error ?? '');
  throw new CatalogQueryError(`Query failed: ${reply.error ?? 'unknown error'}. ${SCHEMA_HINT}`);
}

export const SCHEMA_HINT = `query_catalog runs one read-only SELECT over ${ARTIFACTS}(id, name, storage_uri, description, domain, source_type, content_type, size_bytes, indexed_at).`;

export function timedOut(ms: number): CatalogQueryError {
  return new CatalogQueryError(`Query took longer than ${ms / 1000} s and was stopped. Narrow it (WHERE, LIMIT, fewer joins) and retry.`);
}

export function writeRefused(detail: string): CatalogQueryRefusedError {
  return new CatalogQueryRefusedError(`Write operations are not permitted: the catalog is read-only (${detail}).`);
}

export function tableRefused(table: string): CatalogQueryRefusedError {
  return new CatalogQueryRefusedError(`query_catalog reads only the catalog (${ARTIFACTS}, ${ARTIFACTS_FTS}); '${table}' is not part of it. ${SCHEMA_HINT}`);
}
