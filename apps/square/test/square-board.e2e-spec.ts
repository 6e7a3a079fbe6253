import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppProcess } from '../../../test/support/app-process';
import { dbTarget, postgresAvailable, type DbTarget } from '../../../test/support/databases';
import { startSquare } from '../../../test/support/square-process';
import { devToken, rawToolCall } from '../../../test/support/ts-clients';

const AGENTS = 8;
const PUTS = 6; // per agent, all at once: 48 writers of one key
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || postgresAvailable());

/** Racing board writers on each database: they queue on the key instead of exhausting their retries. */
describe.each(targets)('board writers racing on one key (%s)', (dbName) => {
  let db: DbTarget;
  let square: AppProcess;
  const call = (agent: number, tool: string, args: Record<string, unknown>) =>
    rawToolCall(square.mcpUrl, tool, args, { token: devToken(`writer${agent}`) });
  const agents = Array.from({ length: AGENTS }, (_, a) => a);

  beforeAll(async () => {
    db = dbTarget(dbName);
    square = await startSquare({ database: dbName === 'sqlite' ? { sqlite_path: db.defaultSqlitePath } : db.database });
    for (const a of agents) await call(a, 'register', { name: `writer-${a}` });
  }, 60_000);
  afterAll(async () => {
    await square?.stop();
    await db?.cleanup();
  });

  it('every unconditional board_put of a racing crowd succeeds, each with a version of its own', async () => {
    const results = await Promise.all(
      agents.flatMap((a) =>
        Array.from({ length: PUTS }, (_, i) => call(a, 'board_put', { key: 'race/free', value: { a, i } })),
      ),
    );
    expect(results.filter((r) => r.isError).map((r) => r.text)).toEqual([]);
    const versions = results.map((r) => r.json.version as number).sort((x, y) => x - y);
    expect(versions).toEqual(Array.from({ length: AGENTS * PUTS }, (_, v) => v + 1));
    const history = (await call(0, 'board_history', { key: 'race/free', limit: 100 })).json.versions as {
      version: number;
      value: { a: number; i: number };
    }[];
    expect(history.map((h) => h.version)).toEqual([...versions].reverse());
    const written = history.map((h) => `${h.value.a}:${h.value.i}`).sort();
    expect(written).toEqual(agents.flatMap((a) => Array.from({ length: PUTS }, (_, i) => `${a}:${i}`)).sort());
  });

  it('of racing puts with the same expected_version exactly one wins; the others learn the version it made', async () => {
    const first = await call(0, 'board_put', { key: 'race/cas', value: 0, expected_version: 0 });
    expect(first.json).toMatchObject({ version: 1 });
    const results = await Promise.all(
      agents.map((a) => call(a, 'board_put', { key: 'race/cas', value: a, expected_version: 1 })),
    );
    const won = results.filter((r) => !r.isError);
    expect(won).toHaveLength(1);
    expect(won[0]!.json).toMatchObject({ version: 2 });
    for (const lost of results.filter((r) => r.isError))
      expect(lost.json).toMatchObject({
        error: 'VERSION_CONFLICT',
        details: { current_version: 2, expected_version: 1 },
      });
  });
});
