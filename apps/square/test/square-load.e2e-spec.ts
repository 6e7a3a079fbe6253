import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN } from '../../../test/support/admin';
import type { AppProcess } from '../../../test/support/app-process';
import { dbTarget, postgresAvailable, type DbTarget } from '../../../test/support/databases';
import { pySquareAgent, startSquare, type SquareAgentResult } from '../../../test/support/square-process';
import { devToken } from '../../../test/support/ts-clients';

const AGENTS = 20;
const POSTS = 25;
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || postgresAvailable());

describe.each(targets)('20 real Python agents on one square (%s)', (dbName) => {
  let db: DbTarget;
  let square: AppProcess;
  let results: SquareAgentResult[];

  beforeAll(async () => {
    db = dbTarget(dbName);
    square = await startSquare({ database: dbName === 'sqlite' ? { sqlite_path: db.defaultSqlitePath } : db.database });
    // Every agent registers, posts 25 messages and waits (chat_await_update) until all 500 are there; half of
    // them speak the 2025 era (sessions), half 2026-07-28 (stateless).
    results = await Promise.all(
      Array.from({ length: AGENTS }, (_, i) =>
        pySquareAgent({
          url: square.mcpUrl,
          mode: i % 2 ? 'legacy' : 'auto',
          token: devToken(`agent${i}`),
          name: `agent-${i}`,
          channel: '#load',
          posts: POSTS,
          expect: AGENTS * POSTS,
        }),
      ),
    );
  }, 240_000);
  afterAll(async () => {
    await square?.stop();
    await db?.cleanup();
  });

  it('loses and duplicates no message: every message once, numbered 1..500 without gaps', () => {
    const seen = results[0]!.messages;
    expect(seen.map(([seq]) => seq)).toEqual(Array.from({ length: AGENTS * POSTS }, (_, i) => i + 1));
    const expected = Array.from({ length: AGENTS }, (_, a) =>
      Array.from({ length: POSTS }, (_, p) => `agent-${a}:${p}`),
    ).flat();
    expect(seen.map(([, content]) => content).sort()).toEqual(expected.sort());
  });

  it('shows every agent the same order, with each agent’s own posts in the order it sent them', () => {
    for (const r of results) expect(r.messages).toEqual(results[0]!.messages);
    for (let a = 0; a < AGENTS; a++) {
      const mine = results[0]!.messages.map(([, c]) => c).filter((c) => c.startsWith(`agent-${a}:`));
      expect(mine).toEqual(Array.from({ length: POSTS }, (_, p) => `agent-${a}:${p}`));
    }
  });

  it('had agents waiting with chat_await_update while others posted, and welcomed each one in #general', async () => {
    expect(results.some((r) => r.awaits > 0)).toBe(true);
    const res = await fetch(
      `${square.url}/admin/v1/square/channels/${encodeURIComponent('#general')}/messages?limit=1000&order=asc`,
      { headers: ADMIN },
    );
    const { messages } = (await res.json()) as { messages: { agent_id: string; content: string }[] };
    const welcomed = messages.filter((m) => m.agent_id === 'system' && m.content.includes('joined'));
    expect(new Set(welcomed.map((m) => /`([^`]+)`/.exec(m.content)?.[1]))).toEqual(
      new Set(results.map((r) => r.agent_id)),
    );
  });

  it('keeps each agent with the principal that registered it', async () => {
    const res = await fetch(`${square.url}/admin/v1/square/agents`, { headers: ADMIN });
    const { agents } = (await res.json()) as { agents: { name: string; principal: string }[] };
    expect(agents).toHaveLength(AGENTS);
    for (const a of agents) expect(a.principal).toBe(`agent${a.name.slice('agent-'.length)}@tenant-a`);
  });
});
