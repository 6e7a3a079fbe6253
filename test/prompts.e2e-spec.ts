import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { ROOT } from './support/paths';
import { pyCalls } from './support/py-client';
import { startDispatcher, startGateway, startRouter, type RunningRouter } from './support/router-process';
import { devToken, rawRpc } from './support/ts-clients';

/**
 * Upstream prompts and completion/complete through a router (two upstreams), a gateway (one upstream, a policy
 * that blocks `diary_*`) and a dispatcher (two identical workers), driven by the TS SDK v2 client in both eras and
 * the Python mcp client. The upstreams serve test/fixtures/prompt-fixtures.cjs: prompts that name the caller, and
 * `diary_*` only for alice.
 */
const KEY = 'prompts-test-signing-key-0123456789ab';
const passthrough = { mode: 'passthrough', audience: 'dev' };
const FIXTURE = join(ROOT, 'test', 'fixtures', 'prompt-fixtures.cjs');
const MANIFEST = join(ROOT, 'examples', 'servers', 'demo', 'tools.yaml');
const PRIVATE_10S = { ttlMs: 10_000, cacheScope: 'private' };
const PUBLIC_60S = { ttlMs: 60_000, cacheScope: 'public' };

function upstream(name: string, hint: object, sessions: Record<string, unknown> = {}): Promise<RunningExecutor> {
  return startExecutor({
    config: { name, tools: { manifest: MANIFEST }, mcp_extensions: [FIXTURE], sessions: { warm_pool: 0, ...sessions } },
    env: { PROMPT_FIXTURE_OWNER: name, PROMPT_FIXTURE_HINT: JSON.stringify(hint) },
  });
}

const clients: Client[] = [];
async function sdk(url: string, who: string, mode: 'auto' | 'legacy'): Promise<Client> {
  const client = new Client({ name: 'stoa-prompts-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${devToken(who)}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** A refused request's code and message, with `name` replaced so answers about two names compare. */
async function refusal(p: Promise<unknown>, name: string): Promise<{ code: number; message: string }> {
  const err = (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: number; message: string } | undefined;
  if (!err) throw new Error('expected the request to be refused');
  return { code: err.code, message: err.message.split(name).join('<name>') };
}

const textOf = (r: { messages: { content: unknown }[] }) => (r.messages[0]?.content as { text?: string }).text;

/** What each connector should serve: its upstreams' owners, and whether the gateway's policy hides diaries. */
const TARGETS = {
  router: { owners: ['alpha', 'beta'], diaries: true, hint: PRIVATE_10S },
  gateway: { owners: ['beta'], diaries: false, hint: PUBLIC_60S },
  dispatcher: { owners: ['beta'], diaries: true, hint: PUBLIC_60S },
} as const;

describe('upstream prompts and completion/complete through router, gateway and dispatcher (TS and Python clients)', () => {
  const executors: RunningExecutor[] = [];
  const connectors: Record<string, RunningRouter> = {};

  beforeAll(async () => {
    const [alpha, beta, wA, wB] = await Promise.all([
      upstream('alpha', PRIVATE_10S),
      upstream('beta', PUBLIC_60S),
      upstream('beta', PUBLIC_60S, { replica: 'w-a', id_signing_key: KEY }),
      upstream('beta', PUBLIC_60S, { replica: 'w-b', id_signing_key: KEY }),
    ]);
    executors.push(alpha, beta, wA, wB);
    [connectors.router, connectors.gateway, connectors.dispatcher] = await Promise.all([
      startRouter({
        upstreams: [
          { name: 'alpha', url: alpha.mcpUrl },
          { name: 'beta', url: beta.mcpUrl },
        ],
      }),
      startGateway({
        upstream: { name: 'beta', url: beta.mcpUrl, auth: passthrough },
        policy: { blocked_tools: ['diary_*'] },
      }),
      startDispatcher({
        workers: [
          { name: 'w1', url: wA.url },
          { name: 'w2', url: wB.url },
        ],
        worker_auth: passthrough,
        session_key: KEY,
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(Object.values(connectors).map((c) => c.stop()));
    await Promise.all(executors.map((e) => e.stop()));
  });

  for (const [kind, t] of Object.entries(TARGETS)) {
    const url = () => connectors[kind]!.mcpUrl;
    const expected = (who: 'alice' | 'bob') =>
      t.owners.flatMap((o) => [`whoami_${o}`, ...(who === 'alice' && t.diaries ? [`diary_${o}`] : [])]);

    for (const mode of ['auto', 'legacy'] as const) {
      it(`${kind} (${mode === 'auto' ? '2026-07-28' : '2025-11-25'}): declares prompts and completions, lists each upstream prompt once under its own name, and gets it from its owner with the caller's identity`, async () => {
        const alice = await sdk(url(), `alice-${kind}-${mode}`, mode);
        const caps = alice.getServerCapabilities();
        expect(caps?.prompts).toBeDefined();
        expect(caps?.completions).toBeDefined();
        const names = (await alice.listPrompts()).prompts.map((p) => p.name);
        expect(names.sort()).toEqual(expected('alice').sort());
        for (const owner of t.owners) {
          const got = await alice.getPrompt({ name: `whoami_${owner}`, arguments: { topic: 'tea' } });
          expect(textOf(got)).toBe(`whoami_${owner} for alice-${kind}-${mode}@tenant-a about tea`);
          expect(got.description).toBe(`${owner} prompt`);
        }
      });
    }

    it(`${kind}: another caller's prompt is not listed and answers exactly like an unknown prompt (TS and Python clients, both eras)`, async () => {
      const owner = t.owners[0];
      const diary = `diary_${owner}`;
      const invented = `diary_nobody_${owner}`;
      for (const mode of ['auto', 'legacy'] as const) {
        const bob = await sdk(url(), `bob-${kind}`, mode);
        expect((await bob.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(expected('bob').sort());
        const a = await refusal(bob.getPrompt({ name: diary }), diary);
        const b = await refusal(bob.getPrompt({ name: invented }), invented);
        expect(a).toEqual(b);
        expect(a).toEqual({ code: -32602, message: expect.stringContaining('Prompt <name> not found') });
      }
      for (const mode of ['auto', 'legacy'] as const) {
        const [listed, own, unknown] = await pyCalls(
          url(),
          mode,
          [{ op: 'list_prompts' }, { op: 'get_prompt', name: diary }, { op: 'get_prompt', name: invented }],
          { token: devToken(`bob-${kind}`) },
        );
        expect(JSON.stringify(listed?.json)).not.toContain(diary);
        const err = (r: typeof own, name: string) => {
          const e = (r?.json as { error?: { code: number; message: string } }).error;
          return e && { code: e.code, message: e.message.split(name).join('<name>') };
        };
        expect(err(own, diary)).toEqual(err(unknown, invented));
        expect(err(own, diary)?.code).toBe(-32602);
      }
    });

    it(`${kind}: completion/complete of a prompt argument and of a resource template variable reaches the owning upstream with the caller's identity (TS and Python clients)`, async () => {
      const owner = t.owners.at(-1)!;
      const alice = await sdk(url(), `carol-${kind}`, 'auto');
      const prompt = await alice.complete({
        ref: { type: 'ref/prompt', name: `whoami_${owner}` },
        argument: { name: 'topic', value: 'te' },
      });
      expect(prompt.completion.values).toEqual([`${owner}:topic=te:carol-${kind}@tenant-a`]);
      const uriTemplate = `artifact://${owner}/{session_id}/{+path}`;
      const [py] = await pyCalls(
        url(),
        'legacy',
        [{ op: 'complete', ref: { type: 'ref/resource', uri: uriTemplate }, argument: { name: 'path', value: 'o' } }],
        { token: devToken(`carol-${kind}`) },
      );
      expect((py?.json as { completion?: { values: string[] } }).completion?.values).toEqual([
        `${owner}:path=o:carol-${kind}@tenant-a`,
      ]);
      const unknown = 'artifact://nobody/{x}';
      const e = await refusal(
        alice.complete({ ref: { type: 'ref/resource', uri: unknown }, argument: { name: 'x', value: '' } }),
        unknown,
      );
      expect(e).toEqual({ code: -32602, message: expect.stringContaining('Resource template <name> not found') });
    });

    it(`${kind}: prompts/list carries the upstreams' strictest 2026-07-28 cache hint`, async () => {
      const list = await rawRpc(url(), 'prompts/list', {}, { token: devToken(`dave-${kind}`) });
      expect(list.result).toMatchObject(t.hint);
    });
  }

  it('gateway: a prompt its policy blocks answers like an unknown prompt even for the caller the upstream would serve it to, and its arguments do not complete', async () => {
    const alice = await sdk(connectors.gateway!.mcpUrl, 'alice-gw-blocked', 'auto');
    const a = await refusal(alice.getPrompt({ name: 'diary_beta' }), 'diary_beta');
    const b = await refusal(alice.getPrompt({ name: 'diary_nobody' }), 'diary_nobody');
    expect(a).toEqual(b);
    const c = await refusal(
      alice.complete({ ref: { type: 'ref/prompt', name: 'diary_beta' }, argument: { name: 'x', value: '' } }),
      'diary_beta',
    );
    expect(c).toEqual(a);
  });
});
