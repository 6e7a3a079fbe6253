import type { ValueTransformer } from 'typeorm';

/** Epoch milliseconds stored as bigint: PostgreSQL returns strings, SQLite numbers; both read back as numbers. */
export const epochMs: ValueTransformer = {
  to: (v: number | null | undefined) => v,
  from: (v: string | number | null) => (v === null || v === undefined ? null : Number(v)),
};
