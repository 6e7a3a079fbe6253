import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTarget, postgresAvailable } from '../../../test/support/databases';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { ROOT } from '../../../test/support/paths';
import { pyCalls } from '../../../test/support/py-client';
import { startRouter, until, type RunningRouter } from '../../../test/support/router-process';
import { devToken, rawToolCall, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

const demoDir = join(ROOT, 'examples', 'servers', 'demo');
const demoDomain = { tools: { manifest: join(demoDir, 'tools.yaml') }, skills: { dir: join(demoDir, 'skills') } };

/** Calls `call` while polling `/health` back to back; the slowest /health answer shows how long the process stalled. */
async function whileHealthPolled<T>(
  url: string,
  call: () => Promise<T>,
): Promise<{ result: T; slowestHealthMs: number; polls: number }> {
  let done = false;
  let slowest = 0;
  let polls = 0;
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      expect((await fetch(`${url}/health`)).status).toBe(200);
      slowest = Math.max(slowest, performance.now() - t0);
      polls++;
    }
  })();
  try {
    return { result: await call(), slowestHealthMs: slowest, polls };
  } finally {
    done = true;
    await poller;
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** search, session and failure answers of the tools themselves, on an executor and through a router over it. */
describe('tool inputs on an executor and through a router', () => {
  let ex: RunningExecutor;
  let router: RunningRouter;
  let alice: TestClient;
  let bob: TestClient;
  let viaRouter: TestClient;

  beforeAll(async () => {
    ex = await startExecutor({ config: { ...demoDomain, search: { max_query_chars: 4000 } } });
    router = await startRouter({
      upstreams: [{ name: 'demo', url: ex.mcpUrl, auth: { mode: 'passthrough', audience: 'dev' } }],
      search: { max_query_chars: 3000 },
    });
    alice = await v2Client(ex.mcpUrl, 'auto', devToken('alice'));
    bob = await v2Client(ex.mcpUrl, 'auto', devToken('bob'));
    viaRouter = await v2Client(router.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await Promise.all([alice?.close(), bob?.close(), viaRouter?.close()]);
    await router?.stop();
    await ex?.stop();
  });

  it('a 1 MB search word is refused at once with the configured limit; /health stalls no longer than for any 1 MB call', async () => {
    for (const [target, base, tool, limit] of [
      ['executor', ex.url, 'search_demo_tools', 4000],
      ['router', router.url, 'search_lab_tools', 3000],
    ] as const) {
      // Same-run baseline: a trivial tool called with as many bytes (the transport's share of the cost, which is not
      // search's), alternated with the search, 3 rounds each; the medians of each round's slowest /health are compared.
      const stalls = { transport: [] as number[], search: [] as number[] };
      for (let round = 0; round < 2; round++) {
        stalls.transport.push(
          (
            await whileHealthPolled(base, () =>
              rawToolCall(`${base}/mcp`, 'demo_list_sessions', { pad: 'q'.repeat(1_048_576) }),
            )
          ).slowestHealthMs,
        );
        stalls.search.push(
          (await whileHealthPolled(base, () => rawToolCall(`${base}/mcp`, tool, { query: 'q'.repeat(1_048_576) })))
            .slowestHealthMs,
        );
      }
      stalls.transport.push(
        (
          await whileHealthPolled(base, () =>
            rawToolCall(`${base}/mcp`, 'demo_list_sessions', { pad: 'q'.repeat(1_048_576) }),
          )
        ).slowestHealthMs,
      );
      const t0 = performance.now();
      const { result, slowestHealthMs, polls } = await whileHealthPolled(base, () =>
        rawToolCall(`${base}/mcp`, tool, { query: 'q'.repeat(1_048_576) }),
      );
      stalls.search.push(slowestHealthMs);
      expect({ target, isError: result.isError, error: result.json.error }).toEqual({
        target,
        isError: true,
        error: `Query too long: 1048576 characters, the limit is ${limit} (search.max_query_chars). Describe what you want to do in a few words, e.g. 'shortest path in a weighted graph'.`,
      });
      expect(result.text.length).toBeLessThan(1000); // the query is not echoed
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(polls).toBeGreaterThan(0);
      expect(median(stalls.search)).toBeLessThan(100 + median(stalls.transport));
    }
  });

  it('a 32k-character query within a raised limit is answered in linear time', async () => {
    const t0 = performance.now();
    const r = await alice.call('search_demo_tools', { query: `csv ${'x'.repeat(60)} `.repeat(60).slice(0, 3990) });
    expect(r.isError).toBe(false);
    expect((r.json.tools as { name: string }[]).map((t) => t.name)).toContain('parse_csv');
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('search with top 0 or below is refused, never answered with "No tools or skills matched"', async () => {
    for (const [client, tool] of [
      [alice, 'search_demo_tools'],
      [viaRouter, 'search_lab_tools'],
    ] as const) {
      for (const top of [0, -3]) {
        const r = await client
          .call(tool, { query: 'csv', top })
          .catch((err: Error) => ({ isError: true, text: err.message, json: {} }));
        expect({ tool, top, isError: r.isError }).toEqual({ tool, top, isError: true });
        expect(r.text).toContain('top must be at least 1');
        expect(r.text).not.toContain('No tools or skills matched');
      }
      expect((await client.call(tool, { query: 'csv', top: 1 })).json.tools).toHaveLength(1);
    }
  });

  it('close_session answers an unknown and a foreign id with the same not-found error, and the foreign session lives on (Python client, both eras)', async () => {
    const own = await alice.call('execute_demo_code', { code: 'secret = 7' });
    const sid = own.json.session_id as string;
    for (const mode of ['auto', 'legacy'] as const) {
      const [foreign, unknown] = await pyCalls(
        ex.mcpUrl,
        mode,
        [
          { tool: 'demo_close_session', args: { session_id: sid } },
          { tool: 'demo_close_session', args: { session_id: 's-unknown' } },
        ],
        { token: devToken('bob') },
      );
      expect(foreign).toMatchObject({
        is_error: true,
        json: {
          success: false,
          error: expect.stringMatching(
            new RegExp(`^Session ${sid} not found\\. It may have expired or been cleaned up\\. Active sessions: \\d+$`),
          ),
        },
      });
      expect(unknown?.is_error).toBe(true);
      expect(String(unknown?.json.error).replace('s-unknown', sid)).toBe(foreign?.json.error);
      expect(foreign?.text).not.toContain('closed successfully');
    }
    expect((await alice.call('execute_demo_code', { code: 'secret', execution_session_id: sid })).json.stdout).toBe(
      '7\n',
    );
  });

  it('close_session through the router refuses a foreign id the same way and closes an own one', async () => {
    const own = await alice.call('execute_demo_code', { code: 'pass' });
    const sid = own.json.session_id as string;
    const [foreign] = await pyCalls(
      router.mcpUrl,
      'auto',
      [{ tool: 'demo_close_session', args: { session_id: sid } }],
      { token: devToken('bob') },
    );
    expect(foreign).toMatchObject({
      is_error: true,
      json: { success: false, error: expect.stringContaining(`Session ${sid} not found.`) },
    });
    const mine = await viaRouter.call('demo_close_session', { session_id: sid });
    expect(mine).toMatchObject({
      isError: false,
      json: { success: true, message: `Session ${sid} closed successfully` },
    });
  });

  it('failures of the tool itself are flagged isError with the reference body; a Python exception is not (Python client, both eras)', async () => {
    const calls = [
      { tool: 'load_demo_skill', args: { skill_name: 'nope' } },
      { tool: 'demo_send', args: { data_ref: 'x', to: 'nowhere' } },
      { tool: 'demo_check_job', args: { job_id: 'j_000000000000' } },
      { tool: 'demo_parallel_execute', args: { code: 'x', inputs: [{ 'not-an-identifier': 1 }] } },
      { tool: 'execute_demo_code', args: { code: '1', execution_session_id: 's-missing' } },
      { tool: 'demo_get_session_info', args: { session_id: 's-missing' } },
      { tool: 'search_demo_tools', args: { query: 'csv', category: 'both' } },
      { tool: 'plan_demo_workflow', args: { mode: 'sideways' } },
      { tool: 'execute_demo_code', args: { code: '1/0' } },
    ];
    for (const [url, mode] of [
      [ex.mcpUrl, 'auto'],
      [ex.mcpUrl, 'legacy'],
      [router.mcpUrl, 'auto'],
      [router.mcpUrl, 'legacy'],
    ] as const) {
      const r = await pyCalls(url, mode, calls, { token: devToken('alice') });
      const flags = r.map((x, i) => [calls[i]?.tool, x.is_error]);
      expect({ url, mode, flags }).toEqual({ url, mode, flags: calls.map((c, i) => [c.tool, i < calls.length - 1]) });
      expect(r[0]?.json).toEqual({ error: "Skill 'nope' not found.", available_skills: ['csv-summary'] });
      expect(r[1]?.json).toMatchObject({
        success: false,
        error: "Unknown destination 'nowhere'. Available destinations: ['user']",
      });
      expect(r[2]?.json).toEqual({ success: false, error: 'Job j_000000000000 not found' });
      expect(r[3]?.json.error).toBe(
        "Invalid inputs[0]: Invalid input key 'not-an-identifier'. Keys must be valid Python identifiers and not reserved keywords.",
      );
      expect(r[4]?.json).toMatchObject({
        success: false,
        stdout: '',
        stderr: '',
        tool_calls: [],
        error: expect.stringContaining('Session s-missing not found.'),
      });
      expect(r[5]?.json.error).toMatch(/^Session not found: Session s-missing not found\./);
      expect(r[6]?.json).toEqual({ error: "Invalid category 'both'. Must be 'all', 'tools', or 'skills'." });
      expect(r[7]?.json).toEqual({ error: "Unknown mode 'sideways'. Use: overview, next_steps, path, tool." });
      expect(r[8]?.json).toMatchObject({
        success: false,
        error: 'Kernel execution failed',
        stderr: expect.stringContaining('ZeroDivisionError'),
      });
    }
  });

  it("the router's own skill tool flags an unknown skill and an unknown upstream as isError", async () => {
    const skill = await viaRouter.call('load_lab_skill', { skill_name: 'nope' });
    expect(skill).toMatchObject({
      isError: true,
      json: { error: "Skill 'nope' not found.", available_skills: ['csv-summary'] },
    });
    const upstream = await viaRouter.call('load_lab_skill', { skill_name: 'csv-summary', upstream: 'elsewhere' });
    expect(upstream).toMatchObject({
      isError: true,
      json: { error: "Unknown upstream 'elsewhere'.", available_upstreams: ['demo'] },
    });
  });
});

const pg = postgresAvailable();

describe.each((['sqlite', 'postgres'] as const).filter((k) => k === 'sqlite' || pg))(
  'parallel_execute input cap on %s',
  (kind) => {
    const db = dbTarget(kind);
    let ex: RunningExecutor;
    let alice: TestClient;
    const batches = async () =>
      ((await (await fetch(`${ex.url}/admin/v1/batches`, { headers: ADMIN })).json()) as { count: number }).count;
    const jobs = async () =>
      ((await (await fetch(`${ex.url}/admin/v1/jobs`, { headers: ADMIN })).json()) as { count: number }).count;

    beforeAll(async () => {
      const database = kind === 'sqlite' ? {} : { database: db.database };
      ex = await startExecutor({ config: { ...database, execution: { parallel_max_inputs: 3 } } });
      alice = await v2Client(ex.mcpUrl, 'legacy', devToken('alice')); // 2025-era: the batch would get a parent session
    });
    afterAll(async () => {
      await alice?.close();
      await ex?.stop();
      await db.cleanup();
    });

    it('100k inputs are refused quickly with the limit, nothing is written, and /health stalls no longer than for any such body', async () => {
      const before = { batches: await batches(), jobs: await jobs() };
      const inputs = Array.from({ length: 100_000 }, (_, i) => ({ i }));
      const transport = await whileHealthPolled(ex.url, () =>
        rawToolCall(ex.mcpUrl, 'demo_list_sessions', { pad: inputs }),
      );
      const t0 = performance.now();
      const { result: refused, slowestHealthMs } = await whileHealthPolled(ex.url, () =>
        rawToolCall(ex.mcpUrl, 'demo_parallel_execute', { code: 'result = i', inputs }),
      );
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(refused).toMatchObject({
        isError: true,
        json: {
          success: false,
          error:
            "'inputs' must have at most 3 entries (got 100000). Split the work into batches of at most 3 inputs, or give each input a chunk of the work to loop over in the code template. Nothing was started.",
        },
      });
      // The margin covers the SDK's zod check of 100k dicts against the input schema (~100-200 ms on a loaded 2-core VM);
      // before the cap the same call stalled the process for 17 s.
      expect(slowestHealthMs).toBeLessThan(300 + transport.slowestHealthMs);
      expect({ batches: await batches(), jobs: await jobs() }).toEqual(before);
    });

    it('a refused batch from a 2025-era session creates no parent session', async () => {
      const r = await alice.call('demo_parallel_execute', {
        code: 'result = i',
        inputs: [{ i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }],
      });
      expect(r).toMatchObject({
        isError: true,
        json: { error: expect.stringContaining("'inputs' must have at most 3 entries (got 4)") },
      });
      expect((await alice.call('demo_list_sessions', {})).json.count).toBe(0);
    });

    it('a batch at the limit runs', async () => {
      const batch = await alice.call('demo_parallel_execute', {
        code: 'result = i * 2',
        inputs: [{ i: 1 }, { i: 2 }, { i: 3 }],
      });
      expect(batch.isError).toBe(false);
      const done = await until(
        'batch done',
        async () => {
          const r = (await alice.call('demo_check_batch', { batch_id: batch.json.batch_id })).json;
          return r.status === 'running' ? undefined : r;
        },
        60_000,
      );
      expect((done.jobs as { result: unknown }[]).map((j) => j.result)).toEqual([2, 4, 6]);
    });
  },
);
