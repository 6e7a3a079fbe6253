import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { modernRequest } from './modern-request';

/** Minimal common face of the SDK clients used in tests. */
export interface TestClient {
  call: (
    tool: string,
    args: Record<string, unknown>,
  ) => Promise<{
    json: Record<string, unknown> & { session_id?: string };
    isError: boolean;
    text: string;
    meta?: Record<string, unknown>;
  }>;
  listTools: () => Promise<string[]>;
  describeTool: (name: string) => Promise<string | undefined>;
  /** The tool's inputSchema as tools/list gives it. */
  inputSchemaOf: (name: string) => Promise<{ properties?: Record<string, unknown>; required?: string[] } | undefined>;
  /** Calls a tool with a progress token; returns the result and every progress message received. */
  callWithProgress?: (
    tool: string,
    args: Record<string, unknown>,
  ) => Promise<{ json: Record<string, unknown>; progress: string[] }>;
  /** Calls a tool and cancels the request after `ms` (MCP cancellation); resolves when the call settled. */
  callAndCancel?: (tool: string, args: Record<string, unknown>, ms: number) => Promise<void>;
  close: () => Promise<void>;
}

function unsignedJwt(claims: Record<string, unknown>): string {
  const b = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b({ alg: 'none', typ: 'JWT' })}.${b(claims)}.`;
}

/** An unsigned JWT naming `oid@tid` (no-op auth reads it; nothing verifies it). */
export function devToken(oid: string, tid = 'tenant-a'): string {
  return unsignedJwt({ oid, tid, name: oid });
}

function parse(content: unknown): { text: string; json: Record<string, unknown> } {
  const text = ((content as { type: string; text?: string }[]) ?? []).map((c) => c.text ?? '').join('');
  try {
    return { text, json: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { text, json: {} };
  }
}

/** TS SDK v2 client; `mode` 'auto' negotiates 2026-07-28, 'legacy' speaks 2025-11-25. */
export async function v2Client(url: string, mode: 'auto' | 'legacy', token?: string): Promise<TestClient> {
  const client = new Client({ name: 'stoa-test-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined,
  );
  await client.connect(transport);
  return {
    ...wrap(client),
    callWithProgress: async (tool, args) => {
      const progress: string[] = [];
      const r = await client.callTool(
        { name: tool, arguments: args },
        { onprogress: (p) => progress.push(p.message ?? '') },
      );
      return { json: parse(r.content).json, progress };
    },
    callAndCancel: async (tool, args, ms) => {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), ms);
      await client.callTool({ name: tool, arguments: args }, { signal: ac.signal }).catch(() => undefined);
      clearTimeout(timer);
    },
  };
}

/** TS SDK v1 (1.32) client: 2025-era, sessionful. */
export async function v1Client(url: string, token?: string): Promise<TestClient> {
  const client = new V1Client({ name: 'stoa-test-v1', version: '1.0.0' });
  await client.connect(
    new V1Transport(
      new URL(url),
      token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined,
    ),
  );
  return wrap(client);
}

interface SdkClient {
  callTool: (p: {
    name: string;
    arguments: Record<string, unknown>;
  }) => Promise<{ content?: unknown; isError?: unknown; _meta?: Record<string, unknown> }>;
  listTools: () => Promise<{ tools: { name: string; description?: string; inputSchema: object }[] }>;
  close: () => Promise<void>;
}

function wrap(client: SdkClient): TestClient {
  return {
    call: async (tool, args) => {
      const r = await client.callTool({ name: tool, arguments: args });
      return { ...parse(r.content), isError: Boolean(r.isError), meta: r._meta };
    },
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    describeTool: async (name) => (await client.listTools()).tools.find((t) => t.name === name)?.description,
    inputSchemaOf: async (name) => (await client.listTools()).tools.find((t) => t.name === name)?.inputSchema,
    close: () => client.close(),
  };
}

/**
 * One stateless 2026-07-28 tools/call by raw fetch (little JSON work in this process, and headers of one's own
 * such as `mcp-param-*`), as alice unless `token` says otherwise; the tool result's text must be JSON.
 */
export async function rawToolCall(
  mcpUrl: string,
  tool: string,
  args: Record<string, unknown>,
  o: { token?: string; headers?: Record<string, string>; meta?: Record<string, unknown> } = {},
): Promise<{ isError: boolean; text: string; json: Record<string, unknown> }> {
  const message = await rawRpc(mcpUrl, 'tools/call', { name: tool, arguments: args }, { ...o, name: tool });
  const result = message.result as { isError?: boolean; content: { text: string }[] };
  const text = result.content.map((c) => c.text).join('');
  return { isError: result.isError === true, text, json: JSON.parse(text) as Record<string, unknown> };
}

/**
 * Cancels a 30 s sleep in `sessionId` after `ms` (MCP cancellation), then runs `name` there: its stdout shows
 * whether the session kept its variables; `elapsedMs` (cancel sent → answer back) whether the kernel was
 * interrupted rather than left to finish.
 */
export async function cancelSleepThenRead(
  client: TestClient,
  sessionId: unknown,
  name: string,
  ms: number,
): Promise<{ stdout: unknown; elapsedMs: number }> {
  if (!client.callAndCancel) throw new Error('this client cannot cancel a call (use v2Client)');
  const started = Date.now();
  await client.callAndCancel(
    'execute_demo_code',
    { code: 'import time\ntime.sleep(30)', execution_session_id: sessionId },
    ms,
  );
  const next = await client.call('execute_demo_code', { code: name, execution_session_id: sessionId });
  return { stdout: next.json.stdout, elapsedMs: Date.now() - started };
}

/** One stateless 2026-07-28 request of any method by raw fetch (as alice unless `token` says otherwise): its JSON-RPC answer. */
export async function rawRpc(
  mcpUrl: string,
  method: string,
  params: Record<string, unknown>,
  o: { token?: string; name?: string; headers?: Record<string, string>; meta?: Record<string, unknown> } = {},
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }> {
  const request = modernRequest(method, params, { name: o.name, meta: o.meta });
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { ...request.headers, authorization: `Bearer ${o.token ?? devToken('alice')}`, ...o.headers },
    body: JSON.stringify(request.body),
  });
  const raw = await res.text();
  return JSON.parse(raw.startsWith('{') ? raw : (/^data: (.*)$/m.exec(raw)?.[1] ?? raw)) as never;
}
