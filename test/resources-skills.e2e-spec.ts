import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { ROOT } from './support/paths';
import { pyCalls } from './support/py-client';
import { startDispatcher, startGateway, startRouter, type RunningRouter } from './support/router-process';
import { devToken, rawRpc } from './support/ts-clients';

/**
 * Artifacts as owner-scoped MCP resources and skills over the Skills extension (SEP-2640), on an executor and
 * through a router, a gateway and a dispatcher (over two workers) in front of it, driven by the TS SDK v2 client
 * and the Python mcp client.
 */
const KEY = 'resources-test-signing-key-0123456789';
const passthrough = { mode: 'passthrough', audience: 'dev' };
const DEMO = join(ROOT, 'examples', 'servers', 'demo');
const demoConfig = {
  name: 'demo',
  tools: { manifest: join(DEMO, 'tools.yaml') },
  skills: { dir: join(DEMO, 'skills') },
};
const anyResult = z.looseObject({});
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const WRITE =
  "import os\nos.makedirs(agora_output('out'), exist_ok=True)\n" +
  "open(agora_output('out/table v1.csv'), 'w').write('x,y\\n1,2\\n')\n" +
  `open(agora_output('plot.png'), 'wb').write(bytes.fromhex('${PNG.toString('hex')}'))`;

type Sdk = Client;
const clients: Sdk[] = [];
async function sdk(url: string, who: string, mode: 'auto' | 'legacy' = 'auto'): Promise<Sdk> {
  const client = new Client({ name: 'stoa-resources-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${devToken(who)}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function execute(client: Sdk, code: string) {
  const r = await client.callTool({ name: 'execute_demo_code', arguments: { code } });
  const content = r.content as { type: string; text?: string; uri?: string; mimeType?: string; size?: number }[];
  return { json: JSON.parse(content[0]?.text ?? '{}') as Record<string, unknown>, content };
}

/** A refused request's code and message, with `uri` in the message replaced so answers about two URIs compare. */
async function refusal(p: Promise<unknown>, uri: string): Promise<{ code: number; message: string }> {
  const err = (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: number; message: string } | undefined;
  if (!err) throw new Error('expected the request to be refused');
  return { code: err.code, message: err.message.split(uri).join('<uri>') };
}

describe('artifacts as MCP resources and skills over the Skills extension (executor, router, gateway, dispatcher; TS and Python clients)', () => {
  let executor: RunningExecutor;
  let router: RunningRouter;
  let gateway: RunningRouter;
  let dispatcher: RunningRouter;
  const workers: RunningExecutor[] = [];
  const urls = () => ({
    executor: executor.mcpUrl,
    router: router.mcpUrl,
    gateway: gateway.mcpUrl,
    dispatcher: dispatcher.mcpUrl,
  });

  beforeAll(async () => {
    const worker = (replica: string) =>
      startExecutor({ config: { ...demoConfig, sessions: { replica, id_signing_key: KEY, warm_pool: 1 } } });
    const started = await Promise.all([startExecutor({ config: demoConfig }), worker('w-a'), worker('w-b')]);
    executor = started[0];
    workers.push(...started.slice(1));
    [router, gateway, dispatcher] = await Promise.all([
      startRouter({ upstreams: [{ name: 'demo', url: executor.mcpUrl }] }),
      startGateway({ upstream: { name: 'demo', url: executor.mcpUrl, auth: passthrough } }),
      startDispatcher({
        workers: workers.map((w, i) => ({ name: `w${i + 1}`, url: w.url })),
        worker_auth: passthrough,
        session_key: KEY,
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all([router, gateway, dispatcher].map((c) => c?.stop()));
    await Promise.all([executor, ...workers].map((e) => e?.stop()));
  });

  it('dispatcher: artifacts of sessions on either worker are read where they live; listings name each resource once', async () => {
    const alice = await sdk(dispatcher.mcpUrl, 'alice-two-workers');
    const sessions = new Set<string>();
    for (let i = 0; i < 2; i++)
      sessions.add(String((await execute(alice, `open(agora_output('n.txt'),'w').write('${i}')`)).json.session_id));
    const replicas = [...sessions].map((sid) => Buffer.from(sid.split('.')[1] ?? '', 'base64url').toString());
    expect(new Set(replicas)).toEqual(new Set(['w-a', 'w-b'])); // round robin: one session on each worker
    for (const [i, sid] of [...sessions].entries()) {
      const uri = `artifact://demo/${sid}/n.txt`;
      expect((await alice.readResource({ uri })).contents).toEqual([{ uri, mimeType: 'text/plain', text: `${i}` }]);
    }
    const listed = (await alice.listResources()).resources.map((r) => r.uri);
    expect(listed.length).toBe(new Set(listed).size);
    expect(listed.filter((u) => u === 'skill://demo/csv-summary/SKILL.md')).toHaveLength(1);
  });

  for (const kind of ['executor', 'router', 'gateway', 'dispatcher'] as const) {
    it(`${kind}: an execute result links its new files as resource_link content beside the reference's JSON, and the owner lists and reads them`, async () => {
      const alice = await sdk(urls()[kind], `alice-${kind}`);
      const { json, content } = await execute(alice, WRITE);
      const sid = String(json.session_id);
      expect(json.artifacts).toEqual([
        { name: 'out/table v1.csv', size_bytes: 8, mime_type: 'text/csv' },
        { name: 'plot.png', size_bytes: PNG.length, mime_type: 'image/png' },
      ]);
      const csvUri = `artifact://demo/${sid}/out/table%20v1.csv`;
      const pngUri = `artifact://demo/${sid}/plot.png`;
      expect(content.slice(1)).toEqual([
        expect.objectContaining({ type: 'resource_link', uri: csvUri, mimeType: 'text/csv', size: 8 }),
        expect.objectContaining({ type: 'resource_link', uri: pngUri, mimeType: 'image/png', size: PNG.length }),
      ]);

      const listed = (await alice.listResources()).resources.map((r) => r.uri);
      expect(listed).toEqual(expect.arrayContaining([csvUri, pngUri, 'skill://demo/csv-summary/SKILL.md']));
      const csv = await alice.readResource({ uri: csvUri });
      expect(csv.contents).toEqual([{ uri: csvUri, mimeType: 'text/csv', text: 'x,y\n1,2\n' }]);
      const png = await alice.readResource({ uri: pngUri });
      expect(png.contents).toEqual([{ uri: pngUri, mimeType: 'image/png', blob: PNG.toString('base64') }]);
      const templates = await alice.listResourceTemplates();
      expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['artifact://demo/{session_id}/{+path}']);
    });

    it(`${kind}: listings and reads of someone's files are private and stale at once; skills are public (2026-07-28 cache hints)`, async () => {
      const token = devToken(`carol-${kind}`);
      const { json } = await execute(
        await sdk(urls()[kind], `carol-${kind}`),
        "open(agora_output('c.txt'),'w').write('c')",
      );
      const uri = `artifact://demo/${String(json.session_id)}/c.txt`;
      const list = await rawRpc(urls()[kind], 'resources/list', {}, { token });
      expect(list.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
      const read = await rawRpc(urls()[kind], 'resources/read', { uri }, { token, name: uri });
      expect(read.result).toMatchObject({ contents: [{ uri, text: 'c' }], ttlMs: 0, cacheScope: 'private' });
      const skills = await rawRpc(urls()[kind], 'skills/list', {}, { token });
      expect(skills.result).toMatchObject({ cacheScope: 'public', ttlMs: expect.any(Number) });
    });

    it(`${kind}: a second user reading the first user's artifact URI gets exactly the unknown-URI answer (TS and Python clients, both eras) and never sees it listed`, async () => {
      const alice = await sdk(urls()[kind], `alice2-${kind}`);
      const { json } = await execute(alice, "open(agora_output('secret.txt'),'w').write('s3cret')");
      const sid = String(json.session_id);
      const stolen = `artifact://demo/${sid}/secret.txt`;
      const invented = `artifact://demo/s-${randomBytes(15).toString('base64url')}/secret.txt`;
      expect((await alice.readResource({ uri: stolen })).contents[0]).toMatchObject({ text: 's3cret' });

      for (const mode of ['auto', 'legacy'] as const) {
        const bob = await sdk(urls()[kind], `bob-${kind}`, mode);
        const a = await refusal(bob.readResource({ uri: stolen }), stolen);
        const b = await refusal(bob.readResource({ uri: invented }), invented);
        expect(a).toEqual(b);
        expect(a.code).toBe(-32602);
        expect((await bob.listResources()).resources.map((r) => r.uri)).not.toContain(stolen);
      }
      for (const mode of ['auto', 'legacy'] as const) {
        const [s, i, l] = await pyCalls(
          urls()[kind],
          mode,
          [{ op: 'read_resource', uri: stolen }, { op: 'read_resource', uri: invented }, { op: 'list_resources' }],
          { token: devToken(`bob-${kind}`) },
        );
        const err = (r: typeof s, uri: string) => {
          const e = (r?.json as { error?: { code: number; message: string } }).error;
          return e && { code: e.code, message: e.message.split(uri).join('<uri>') };
        };
        expect(err(s, stolen)).toEqual(err(i, invented));
        expect(err(s, stolen)).toEqual({ code: -32602, message: 'Resource not found: <uri>' });
        expect(JSON.stringify(l?.json)).not.toContain(sid);
      }
    });

    it(`${kind}: skills/list serves the demo skill with its front matter and digest; SKILL.md reads back with that digest; an unknown skill is -32602`, async () => {
      const client = await sdk(urls()[kind], `dave-${kind}`);
      const caps = client.getServerCapabilities() as { extensions?: Record<string, unknown>; resources?: unknown };
      expect(caps.extensions?.['io.modelcontextprotocol/skills']).toEqual({});
      expect(caps.resources).toBeDefined();
      const list = await client.request({ method: 'skills/list', params: {} } as never, anyResult);
      const entry = (list.skills as { uri: string; frontmatter: Record<string, unknown>; resources: unknown[] }[])[0]!;
      expect(entry).toMatchObject({
        uri: 'skill://demo/csv-summary/SKILL.md',
        frontmatter: {
          name: 'csv-summary',
          states: ['demo.table_loaded', 'demo.table_filtered', 'demo.summary_ready'],
        },
      });
      const text = String(
        (await client.readResource({ uri: entry.uri })).contents.map((c) => ('text' in c ? c.text : ''))[0],
      );
      const bytes = Buffer.from(text, 'utf8');
      expect(entry.resources).toEqual([
        { uri: entry.uri, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, size: bytes.length },
      ]);
      const got = await client.request({ method: 'skills/get', params: { uri: entry.uri } } as never, anyResult);
      expect(got.skill).toEqual(entry);
      const unknown = 'skill://demo/no-such-skill/SKILL.md';
      const e = await refusal(
        client.request({ method: 'skills/get', params: { uri: unknown } } as never, anyResult),
        unknown,
      );
      expect(e.code).toBe(-32602);

      const [py] = await pyCalls(urls()[kind], 'auto', [{ op: 'request', method: 'skills/list' }], {
        token: devToken(`dave-${kind}`),
      });
      expect(py?.json.skills).toEqual(list.skills);
      // load_{name}_skill stays for reference-compatible agents and returns the same markdown.
      if (kind === 'executor') {
        const loaded = await client.callTool({ name: 'load_demo_skill', arguments: { skill_name: 'csv-summary' } });
        expect((loaded.content as { text: string }[])[0]?.text).toBe(text);
      }
    });
  }
});
