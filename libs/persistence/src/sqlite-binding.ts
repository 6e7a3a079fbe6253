import type { DataSource } from 'typeorm';

type Escape = (
  sql: string,
  parameters: Record<string, unknown>,
  native: Record<string, unknown>,
) => [string, unknown[]];

/**
 * TypeORM's SQLite drivers write every number parameter into the SQL text (`… WHERE expires_at > 1796352610042`),
 * so a statement with a timestamp, a duration or a count in it is a new statement on every call: prepared anew,
 * and pushing the hot statements out of the driver's first-in-first-out statement cache (an audit INSERT per call
 * did). This binds them as parameters instead: safe integers as BigInt, which SQLite binds as INTEGER (exactly
 * what the literal was; a JS number would bind as REAL), other numbers as they were (literals).
 *
 * No-op on other databases (PostgreSQL binds every parameter already).
 */
export function bindNumbersOnSqlite(ds: DataSource): DataSource {
  if (ds.options.type !== 'better-sqlite3') return ds;
  const driver = ds.driver as unknown as { escapeQueryWithParameters: Escape };
  const original = driver.escapeQueryWithParameters.bind(driver);
  driver.escapeQueryWithParameters = (sql, parameters, native) =>
    original(sql, parameters && bindableNumbers(parameters), native);
  return ds;
}

/** The parameters with safe integers as BigInt (the driver inlines `number`s and binds everything else). */
export function bindableNumbers(parameters: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(parameters)) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) continue;
    out ??= { ...parameters };
    out[key] = BigInt(value);
  }
  return out ?? parameters;
}
