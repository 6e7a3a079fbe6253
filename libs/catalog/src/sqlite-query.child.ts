/**
 * query_catalog on SQLite, in a child process forked by `SqliteReadOnlyQuery` (argv: the database file): it
 * opens its own read-only better-sqlite3 connection, refuses statements that return no rows (VACUUM INTO or
 * ATTACH work even on a read-only connection) and statements whose bytecode opens a b-tree of any table but the
 * catalog's (the file also holds sessions and jobs of every user), answers with at most `maxRows` rows and exits.
 */
import Database from 'better-sqlite3';

/** The one message the parent sends. */
export interface QueryRequest {
  sql: string;
  maxRows: number;
  /** B-trees the statement may open. */
  allowed: readonly string[];
}

/** The one message the child answers with. */
export type QueryReply =
  | { rows: Record<string, unknown>[] }
  | { refused: 'not_a_query' }
  | { refused: 'table'; table: string }
  | { error: string; code?: string };

const OPEN = new Set(['OpenRead', 'OpenWrite', 'ReopenIdx']);
const EXPLAIN = /^\s*(?:(?:--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)\s*)*explain\b/i;

/** One row of `EXPLAIN` (the opcodes of the statement). */
interface Opcode {
  opcode: string;
  p2: number;
  p3: number;
  p5: number;
}

function answer(file: string, req: QueryRequest): QueryReply {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 250 });
    const stmt = db.prepare<unknown[], Record<string, unknown>>(req.sql);
    if (!stmt.reader) return { refused: 'not_a_query' };
    const table = EXPLAIN.test(req.sql) ? undefined : foreignTable(db, req.sql, req.allowed);
    if (table) return { refused: 'table', table };
    const rows: Record<string, unknown>[] = [];
    for (const row of stmt.iterate()) {
      rows.push(plain(row));
      if (rows.length >= req.maxRows) break;
    }
    return { rows };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err), code: (err as { code?: string } | null)?.code };
  } finally {
    db?.close();
  }
}

/** The first b-tree the statement opens that is not in `allowed` ('(unknown)' when it cannot be named). */
function foreignTable(db: Database.Database, sql: string, allowed: readonly string[]): string | undefined {
  const tables = new Map(
    db.prepare<[], [number, string]>('SELECT rootpage, tbl_name FROM sqlite_schema WHERE rootpage > 0').raw().all(),
  );
  tables.set(1, 'sqlite_schema');
  for (const op of db.prepare<[], Opcode>(`EXPLAIN ${sql}`).all()) {
    // p3 is the database (0 main, 1 temp, which a fresh connection has empty); p5 & 0x10: p2 is a register.
    if (!OPEN.has(op.opcode) || op.p3 === 1) continue;
    const table = op.p3 === 0 && !(op.p5 & 0x10) ? tables.get(op.p2) : undefined;
    if (!table || !allowed.includes(table)) return table ?? '(unknown)';
  }
  return undefined;
}

/** Blobs as base64 (the answer travels as JSON). */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(row)) if (v instanceof Uint8Array) row[k] = Buffer.from(v).toString('base64');
  return row;
}

process.once('message', (req: QueryRequest) => {
  const file = process.argv[2] ?? '';
  process.send?.(answer(file, req), () => process.exit(0));
});
