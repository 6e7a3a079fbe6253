import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidInputError, type Principal } from '@stoa/core';
import { modernRequest } from '../../../test/support/modern-request';
import { McpEndpoint, type McpRequest } from './mcp-endpoint';
import { defineTool, RawToolResult, ToolFailure, type McpServerSpec, type ToolContext } from './mcp.types';

const principal: Principal = { id: 'dev-user@dev-tenant', roles: [], scopes: [], source: 'noop' };
let seen: ToolContext | undefined;
const tools = [
  defineTool({
    name: 'echo',
    description: 'echo',
    input: z.object({ text: z.string(), n: z.number().default(1) }),
    handler: (a, ctx) => {
      seen = ctx;
      return Promise.resolve({ text: a.text, n: a.n, session_id: 's-1' });
    },
  }),
  defineTool({
    name: 'headed',
    description: 'an x-mcp-header argument',
    input: z.object({ sid: z.string().meta({ 'x-mcp-header': 'Sid' }) }),
    handler: (a) => Promise.resolve({ sid: a.sid }),
  }),
  defineTool({ name: 'plain', description: 'text', input: z.object({}), handler: () => Promise.resolve('just text') }),
  defineTool({
    name: 'refuse',
    description: 'failure',
    input: z.object({}),
    handler: () => Promise.resolve(new ToolFailure({ success: false, error: 'no', job_id: 'j-1' })),
  }),
  defineTool({
    name: 'boom',
    description: 'throws',
    input: z.object({}),
    handler: () => Promise.reject(new InvalidInputError('bad thing. Do it differently.')),
  }),
  defineTool({
    name: 'raw',
    description: 'raw',
    input: z.object({}),
    handler: () => Promise.resolve(new RawToolResult({ content: [], structuredContent: [1, 2] })),
  }),
];

/** One endpoint over real HTTP; `builds` counts the SDK servers it made (none for a direct answer). */
async function serve(directCalls: boolean) {
  const counter = { builds: 0 };
  const spec: McpServerSpec = {
    name: 'direct-spec',
    version: '1.2.3',
    tools: () => tools,
    extend: () => void counter.builds++,
  };
  const endpoint = new McpEndpoint(spec, {
    mintSessionId: () => crypto.randomUUID(),
    legacyIdleMs: 60_000,
    directCalls,
  });
  const server = createServer((req: McpRequest, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      req.body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      void endpoint.handle(req, res, principal);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, endpoint, counter, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

function call(name: string, args: unknown, meta: Record<string, unknown> = {}, id: string | number = 7) {
  return modernRequest('tools/call', { name, arguments: args }, { name, meta, id });
}

/** The JSON-RPC answer of a POST, whether it came as JSON or as an SSE stream. */
async function post(url: string, c: ReturnType<typeof call>) {
  const res = await fetch(url, { method: 'POST', headers: c.headers, body: JSON.stringify(c.body) });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const data = type.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
        .find((m) => 'result' in m || 'error' in m)
    : (JSON.parse(text) as Record<string, unknown>);
  return { status: res.status, data };
}

describe('direct 2026-07-28 tools/call path (real HTTP, SDK path as the reference)', () => {
  let direct: Awaited<ReturnType<typeof serve>>;
  let sdk: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    [direct, sdk] = await Promise.all([serve(true), serve(false)]);
  });
  afterAll(async () => {
    for (const s of [direct, sdk]) {
      s.server.close();
      await s.endpoint.close();
    }
  });

  const cases: [string, ReturnType<typeof call>][] = [
    ['an object result with refs', call('echo', { text: 'hi' })],
    ['a string id and no arguments', call('plain', undefined, {}, 'req-1')],
    ['a ToolFailure', call('refuse', {})],
    ['a thrown AppError', call('boom', {})],
    ['a raw result with non-object structuredContent', call('raw', {})],
    [
      'clientInfo and a traceparent in _meta',
      call(
        'echo',
        { text: 'x', n: 3 },
        {
          'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        },
      ),
    ],
  ];
  it.each(cases)('answers %s exactly as the SDK does, without building an SDK server', async (_, c) => {
    const before = direct.counter.builds;
    const [a, b] = await Promise.all([post(direct.url, c), post(sdk.url, c)]);
    expect(a).toEqual(b);
    expect(a.status).toBe(200);
    expect(direct.counter.builds).toBe(before);
    expect(sdk.counter.builds).toBeGreaterThan(0);
  });

  it('gives the handler the principal, an open signal, no progress and no tasks', async () => {
    seen = undefined;
    await post(direct.url, call('echo', { text: 'ctx' }));
    const ctx = seen as ToolContext | undefined;
    expect(ctx).toMatchObject({ principal, tasksSupported: false, transportSessionId: undefined });
    expect(ctx?.progress).toBeUndefined();
    expect(ctx?.signal.aborted).toBe(false);
  });

  const sdkCases: [string, ReturnType<typeof call>][] = [
    ['invalid arguments', call('echo', { text: 5 })],
    ['an unknown tool', call('nope', {})],
    ['a progress token', call('echo', { text: 'p' }, { progressToken: 'tok' })],
    ['a log level', call('echo', { text: 'l' }, { 'io.modelcontextprotocol/logLevel': 'debug' })],
    [
      'the Tasks extension declared',
      call(
        'echo',
        { text: 't' },
        { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      ),
    ],
  ];
  it.each(sdkCases)('leaves %s to the SDK (same answer either way)', async (_, c) => {
    const before = direct.counter.builds;
    const [a, b] = await Promise.all([post(direct.url, c), post(sdk.url, c)]);
    expect(a).toEqual(b);
    expect(direct.counter.builds).toBeGreaterThan(before);
  });

  it('leaves a tool with an x-mcp-header argument to the SDK, which checks the mirrored header', async () => {
    const before = direct.counter.builds;
    const missing = call('headed', { sid: 's-9' });
    const [a, b] = await Promise.all([post(direct.url, missing), post(sdk.url, missing)]);
    expect(a).toEqual(b);
    expect(a.status).toBe(400); // no Mcp-Param-Sid: the client re-reads tools/list and retries with it
    const mirrored = call('headed', { sid: 's-9' });
    mirrored.headers['mcp-param-sid'] = 's-9';
    const ok = await post(direct.url, mirrored);
    expect(ok.status).toBe(200);
    expect(direct.counter.builds).toBe(before + 2);
  });

  const nameMismatch = call('echo', { text: 'h' });
  nameMismatch.headers['mcp-name'] = 'plain';
  const refused: [string, ReturnType<typeof call>][] = [
    ['an Mcp-Name header that disagrees with the body', nameMismatch],
    [
      'a _meta protocol version that disagrees with the header',
      call('echo', { text: 'v' }, { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }),
    ],
  ];
  it.each(refused)('leaves %s to the SDK, which refuses it the same way', async (_, c) => {
    const [a, b] = await Promise.all([post(direct.url, c), post(sdk.url, c)]);
    expect(a).toEqual(b);
    expect(a.status).toBe(400);
  });
});
