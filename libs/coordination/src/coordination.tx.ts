import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Mutex } from '@stoa/core';

/**
 * Transactions on either database. TypeORM's better-sqlite3 driver shares one connection (one query runner) in a
 * process, so two interleaved transactions would nest; on SQLite they take turns here (SQLite serialises writers
 * anyway, and other processes wait on its lock with busy_timeout).
 */
@Injectable()
export class Transactions {
  private readonly sqlite = new Mutex();
  private readonly isSqlite: boolean;

  constructor(private readonly ds: DataSource) {
    this.isSqlite = ds.options.type === 'better-sqlite3';
  }

  run<T>(fn: (m: EntityManager) => Promise<T>): Promise<T> {
    if (!this.isSqlite) return this.ds.transaction(fn);
    return this.sqlite.runExclusive(() => this.ds.transaction(fn));
  }

  /**
   * A transaction that no other writer of the same `key` (in `scope`) overlaps, on any replica: on PostgreSQL a
   * transaction-scoped advisory lock on the key's hash, taken before `fn` reads (a hash collision only makes two
   * keys take turns); on SQLite every write transaction already runs alone.
   */
  runSerialised<T>(scope: string, key: string, fn: (m: EntityManager) => Promise<T>): Promise<T> {
    if (this.isSqlite) return this.run(fn);
    return this.run(async (em) => {
      await em.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [scope, key]);
      return fn(em);
    });
  }
}
