import { Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '@stoa/core';
import { PersistenceModule } from '@stoa/persistence';
import { TRANSFER_MIGRATIONS, TransferLog, type TransferEvent } from '@stoa/transfer';
import { ArtifactEntity, TransferEntity } from '../src/log/transfer.entities';
import { dbTarget, postgresAvailable } from '../../../test/support/databases';

const pg = postgresAvailable();
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || pg);

/** Only the log (the rest of TransferModule needs sessions and kernels). */
@Module({
  imports: [TypeOrmModule.forFeature([ArtifactEntity, TransferEntity])],
  providers: [TransferLog],
  exports: [TransferLog],
})
class LogOnlyModule {}

function transfer(over: Partial<TransferEvent>): TransferEvent {
  return {
    id: `t-${Math.random().toString(36).slice(2)}`,
    owner: 'alice@t',
    direction: 'out',
    kind: 'peer',
    peer: 'beta',
    sessionId: 's-1',
    dataRef: 'df',
    name: 'df',
    sizeBytes: 3 * 1024 ** 3,
    serializer: 'cloudpickle',
    success: true,
    error: null,
    remoteUri: "Injected 'df' into beta kernel",
    durationMs: 12,
    ...over,
  };
}

describe.each(targets)('transfer and artifact records on %s', (kind) => {
  const db = dbTarget(kind);
  let mod: TestingModule;
  let log: TransferLog;

  beforeAll(async () => {
    mod = await Test.createTestingModule({
      imports: [
        PersistenceModule.forRoot({
          database: db.database,
          defaultSqlitePath: db.defaultSqlitePath,
          migrations: [...TRANSFER_MIGRATIONS],
        }),
        LogOnlyModule,
      ],
    }).compile();
    await mod.init();
    log = mod.get(TransferLog);
  });
  afterAll(async () => {
    await mod?.close();
    await db.cleanup();
  });

  it('keeps sends and receipts, newest first, filtered by owner, session and direction', async () => {
    log.transfer(transfer({ id: 't-1-old' }));
    await log.flush();
    log.transfer(
      transfer({
        id: 't-2-in',
        direction: 'in',
        owner: 'bob@t',
        sessionId: 's-2',
        success: false,
        error: 'Kernel injection failed: …',
        sizeBytes: null,
        serializer: null,
        remoteUri: null,
      }),
    );
    await log.flush();
    const all = await log.listTransfers({ limit: 10 });
    expect(all.map((t) => t.id)).toEqual(['t-2-in', 't-1-old']); // same millisecond: the id breaks the tie
    expect(all[1]).toMatchObject({
      owner: 'alice@t',
      direction: 'out',
      sizeBytes: 3 * 1024 ** 3,
      success: true,
      serializer: 'cloudpickle',
    }); // bigint beyond 2^31
    expect(
      (await log.listTransfers({ limit: 10, owner: 'bob@t', direction: 'in' })).map((t) => [t.id, t.success, t.error]),
    ).toEqual([['t-2-in', false, 'Kernel injection failed: …']]);
    expect(await log.listTransfers({ limit: 10, session_id: 's-1', direction: 'in' })).toEqual([]);
  });

  it('keeps artifacts written by executions', async () => {
    log.artifactsWritten('alice@t', 's-1', [
      { name: 'plots/fig.png', size_bytes: 1234, mime_type: 'image/png' },
      { name: 'table.csv', size_bytes: 8, mime_type: 'text/csv' },
    ]);
    await log.flush();
    const rows = await log.listArtifacts({ limit: 10, owner: 'alice@t' });
    expect(rows.map((r) => [r.name, r.sizeBytes, r.mimeType, r.sessionId]).sort()).toEqual([
      ['plots/fig.png', 1234, 'image/png', 's-1'],
      ['table.csv', 8, 'text/csv', 's-1'],
    ]);
    expect(await log.listArtifacts({ limit: 10, owner: 'bob@t' })).toEqual([]);
  });

  it('refuses a bad limit with a clear message', async () => {
    await expect(log.listTransfers({ limit: 0 })).rejects.toThrow(InvalidInputError);
    await expect(log.listArtifacts({ limit: 5000 })).rejects.toThrow('limit must be an integer between 1 and 1000.');
  });
});
