import { Inject, Injectable } from '@nestjs/common';
import { Ajv, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { clip } from '@stoa/core';
import { EventBus } from '../bus/event-bus';
import type { CoordinationOptions } from '../coordination.config';
import { BoardEntryEntity } from '../coordination.entities';
import { fix, SchemaViolationError, ValidationError, VersionConflictError } from '../coordination.errors';
import { COORDINATION_OPTIONS } from '../coordination.tokens';
import type { BoardEntryView } from '../coordination.types';
import { boardView, BoardRepository, isUniqueViolation } from './board.repository';

export interface PutInput {
  key: string;
  value: unknown;
  /** The version the caller last read; 0 = the key must not exist yet. */
  expected_version?: number;
  /** JSON Schema for this and every later version of the key. */
  schema?: Record<string, unknown>;
}

/**
 * Versioned key/value entries shared by a square. Writes are optimistic (a stale `expected_version` is refused
 * with the current version) and validated against the key's JSON Schema (ajv).
 */
@Injectable()
export class BoardService {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly validators = new LRUCache<string, ValidateFunction>({ max: 500 });

  constructor(
    @Inject(COORDINATION_OPTIONS) private readonly opts: CoordinationOptions,
    private readonly repo: BoardRepository,
    private readonly bus: EventBus,
  ) {}

  async put(agentId: string, p: PutInput): Promise<{ key: string; version: number; updated_at: string }> {
    const key = checkKey(p.key);
    if (p.value === undefined) throw new ValidationError('value is required.', fix('Pass any JSON value as value.'));
    const value = JSON.stringify(p.value);
    if (Buffer.byteLength(value) > this.opts.board.max_value_bytes)
      throw new ValidationError(
        `value is ${Buffer.byteLength(value)} bytes of JSON; the limit is ${this.opts.board.max_value_bytes}.`,
        fix('Store a smaller value, or split it over several keys.'),
      );
    const schemaText = p.schema === undefined ? undefined : JSON.stringify(p.schema);
    if (schemaText !== undefined) this.validator(schemaText); // a bad schema is refused before anything else
    for (let attempt = 0; ; attempt++) {
      try {
        const row = await this.repo.write(key, async (current, em) => {
          const version = current?.version ?? 0;
          if (p.expected_version !== undefined && p.expected_version !== version)
            throw new VersionConflictError(
              `board key '${clip(key, 100)}' is at version ${version}, not ${p.expected_version}.`,
              fix('Read it again with board_get, apply your change to that value, and put with its version.', {
                key,
                current_version: version,
                expected_version: p.expected_version,
              }),
            );
          const schema = schemaText ?? current?.schema ?? null;
          if (schema !== null) this.check(schema, p.value, key);
          const entry = Object.assign(new BoardEntryEntity(), {
            key,
            version: version + 1,
            value,
            schema,
            agentId,
            createdAt: Date.now(),
          });
          await this.repo.insert(em, entry, this.opts.board.max_versions);
          return entry;
        });
        this.bus.publish({ type: 'board.updated', key, version: row.version, agent_id: agentId });
        return { key, version: row.version, updated_at: boardView(row).updated_at };
      } catch (err) {
        // Writers of one key take turns (BoardRepository.write); a clash is left only from another process on
        // the same SQLite file: an unconditional put retries on top of it.
        if (!isUniqueViolation(err)) throw err;
        const now = await this.repo.find(key);
        if (p.expected_version !== undefined || attempt >= 5)
          throw new VersionConflictError(
            `board key '${clip(key, 100)}' was written concurrently; it is now at version ${now?.version ?? 0}.`,
            fix('Read it again with board_get and retry with its version.', {
              key,
              current_version: now?.version ?? 0,
            }),
          );
      }
    }
  }

  async get(key: string, version?: number): Promise<BoardEntryView | null> {
    const row = await this.repo.find(checkKey(key), version);
    return row ? boardView(row) : null;
  }

  async list(prefix = '', limit = 1000): Promise<Omit<BoardEntryView, 'value' | 'schema'>[]> {
    const rows = await this.repo.list(prefix, limit);
    return rows.map((r) => {
      const v = boardView(r);
      return { key: v.key, version: v.version, updated_by: v.updated_by, updated_at: v.updated_at };
    });
  }

  async history(key: string, limit = 100): Promise<BoardEntryView[]> {
    return (await this.repo.history(checkKey(key), limit)).map(boardView);
  }

  private validator(schemaText: string): ValidateFunction {
    let v = this.validators.get(schemaText);
    if (!v) {
      try {
        v = this.ajv.compile(JSON.parse(schemaText) as Record<string, unknown>);
      } catch (err) {
        throw new ValidationError(
          `schema is not a usable JSON Schema: ${clip((err as Error).message, 300)}`,
          fix('Pass a valid JSON Schema (draft 2020-12 or 07).'),
        );
      }
      this.validators.set(schemaText, v);
    }
    return v;
  }

  private check(schemaText: string, value: unknown, key: string): void {
    const validate = this.validator(schemaText);
    if (validate(value)) return;
    const errors = (validate.errors ?? [])
      .slice(0, 10)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
    throw new SchemaViolationError(
      `value does not match the JSON Schema of board key '${clip(key, 100)}': ${errors.join('; ')}`,
      fix('Fix the value (board_get shows the schema), or pass a new schema with it.', { key, errors }),
    );
  }
}

function checkKey(key: string): string {
  const k = key.trim();
  if (!k) throw new ValidationError('key must not be empty.', fix("Name a key, e.g. 'plan/current'."));
  if (k.length > 500) throw new ValidationError('keys are at most 500 characters.', fix('Use a shorter key.'));
  return k;
}
