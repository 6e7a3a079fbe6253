import { randomUUID } from 'node:crypto';
import { on, once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '@stoa/core';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import {
  type CallToolResult,
  MultiServerSession,
  type MultiServerSessionOptions,
  ServerUnavailableError,
  type ServerSpec,
  type ServerState,
  type SessionEvents,
  UnknownToolError,
} from '@stoa/client';

const executorConfig = (name: string) => ({ name, sessions: { warm_pool: 0 } });
const opened: MultiServerSession[] = [];

async function open(servers: ServerSpec[], opts?: MultiServerSessionOptions): Promise<MultiServerSession> {
  const session = await MultiServerSession.connect(servers, opts);
  opened.push(session);
  return session;
}

/** The executor's JSON result: `{ stdout, stderr, success, … }`. */
function output(result: CallToolResult): { stdout: string; success: boolean } {
  return JSON.parse(result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')) as {
    stdout: string;
    success: boolean;
  };
}

/** Resolves on the first `event` that `accept`s; fails after `ms`, showing the session's status. */
async function nextEvent<E extends keyof SessionEvents>(
  session: MultiServerSession,
  event: E,
  accept: (e: SessionEvents[E][0]) => boolean,
  ms = 30_000,
): Promise<void> {
  try {
    for await (const [e] of on(session, event, { signal: AbortSignal.timeout(ms) })) if (accept(e)) return;
  } catch (err) {
    throw new Error(`no matching ${event} within ${ms} ms; status: ${JSON.stringify(session.status())}`, {
      cause: err,
    });
  }
}

/** Resolves once `server` is in `state`, checked now and on every up/down event. */
async function waitForState(
  session: MultiServerSession,
  server: string,
  state: ServerState,
  ms = 30_000,
): Promise<void> {
  if (session.status()[server]?.state === state) return;
  const event = state === 'connected' ? 'serverUp' : 'serverDown';
  await nextEvent(session, event, (e) => e.server === server && session.status()[server]?.state === state, ms);
}

describe('MultiServerSession over two real executors', () => {
  let alpha: RunningExecutor;
  let beta: RunningExecutor;
  const both = (): ServerSpec[] => [
    { name: 'alpha', url: alpha.url },
    { name: 'beta', url: beta.mcpUrl },
  ];

  beforeAll(async () => {
    [alpha, beta] = await Promise.all([
      startExecutor({ config: executorConfig('alpha') }),
      startExecutor({ config: executorConfig('beta') }),
    ]);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  it('connects to all servers concurrently, so a silent one does not hold up the others', async () => {
    // Accepts connections and never answers: only the connect timeout ends that attempt.
    const sockets = new Set<Socket>();
    const silent = createNetServer((s) => void sockets.add(s)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as { port: number }).port;
    const started = Date.now();
    const session = await open([{ name: 'silent', url: `http://127.0.0.1:${port}` }, ...both()], {
      connectTimeoutMs: 3000,
      reconnectBaseMs: 60_000,
    });
    for (const s of sockets) s.destroy();
    silent.close();

    const status = session.status();
    expect(status.silent?.state).toBe('unavailable');
    expect(status.alpha?.state).toBe('connected');
    expect(status.alpha!.connectedAt!.getTime() - started).toBeLessThan(3000);
    expect(status.beta!.connectedAt!.getTime() - started).toBeLessThan(3000);
  });

  it('merges both catalogs under server-qualified names, keeping the original names', async () => {
    const session = await open(both());
    const tools = session.listTools();
    expect(tools).toContainEqual(
      expect.objectContaining({
        server: 'alpha',
        name: 'execute_alpha_code',
        qualifiedName: 'alpha__execute_alpha_code',
      }),
    );
    expect(tools).toContainEqual(
      expect.objectContaining({
        server: 'beta',
        name: 'beta_list_sessions',
        qualifiedName: 'beta__beta_list_sessions',
      }),
    );
    expect(tools.every((t) => /^[A-Za-z0-9_.-]{1,128}$/.test(t.qualifiedName))).toBe(true);
    expect(session.status().beta?.tools).toContain('execute_beta_code');
  });

  it('runs code on each server, by qualified name or by server and tool name', async () => {
    const session = await open(both());
    const [a, b] = await Promise.all([
      session.callTool('alpha__execute_alpha_code', { code: '1+1' }),
      session.callTool('beta', 'execute_beta_code', { code: '1+1' }, { timeoutMs: 30_000 }),
    ]);
    expect(output(a)).toMatchObject({ stdout: '2\n', success: true });
    expect(output(b)).toMatchObject({ stdout: '2\n', success: true });
  });

  it('accepts server URLs with or without the /mcp suffix', async () => {
    const session = await open([
      { name: 'bare', url: alpha.url },
      { name: 'slash', url: `${alpha.url}/` },
      { name: 'suffixed', url: alpha.mcpUrl },
    ]);
    expect(Object.values(session.status()).map((s) => [s.state, s.url])).toEqual(
      Array(3).fill(['connected', alpha.mcpUrl]),
    );
  });

  it('rejects an unknown tool, naming the closest matches', async () => {
    const session = await open(both());
    const err: unknown = await session.callTool('alpha__execute_alpah_code', { code: '1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownToolError);
    expect((err as Error).message).toMatch(/"alpha__execute_alpah_code".*Did you mean: alpha__execute_alpha_code/);
    await expect(session.callTool('execute_beta_code', { code: '1' })).rejects.toThrow(
      /Did you mean: beta__execute_beta_code/,
    );
  });

  it('keeps only the servers serving the requested role, plus the role-less ones', async () => {
    const servers: ServerSpec[] = [
      { name: 'alpha', url: alpha.url, roles: ['compute'] },
      { name: 'beta', url: beta.url, roles: ['analytics'] },
    ];
    servers.push({ name: 'shared', url: beta.url }); // no roles: serves every role
    const session = await open(servers, { role: 'analytics' });
    expect(Object.keys(session.status())).toEqual(['beta', 'shared']);
    expect(session.listTools().some((t) => t.server === 'alpha')).toBe(false);
    const err: unknown = await open(servers.slice(0, 2), { role: 'billing' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toBe('No server serves role "billing". Roles declared: analytics, compute.');
  });

  it('speaks the 2025 era when asked, keeping the MCP session (and kernel) across calls', async () => {
    const session = await open(both(), { era: 'legacy' });
    expect(session.status().alpha?.era).toBe('legacy');
    await session.callTool('alpha__execute_alpha_code', { code: 'x = 41' });
    expect(output(await session.callTool('alpha__execute_alpha_code', { code: 'x + 1' })).stdout).toBe('42\n');
  });

  it('close() ends every client and timer', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const session = await MultiServerSession.connect(both(), { healthIntervalMs: 100 });
    await session.callTool('alpha__execute_alpha_code', { code: '1+1' });
    expect(timers()).toBeGreaterThan(before);
    await session.close();
    expect(timers()).toBeLessThanOrEqual(before);
    await expect(session.callTool('alpha__execute_alpha_code', {})).rejects.toThrow(/closed/);
  });

  describe('when a server is down at connect', () => {
    let session: MultiServerSession;
    let gamma: RunningExecutor | undefined;
    let port: number;

    beforeAll(async () => {
      port = await freePort();
      session = await MultiServerSession.connect(
        [
          { name: 'alpha', url: alpha.url },
          { name: 'gamma', url: `http://127.0.0.1:${port}` },
        ],
        { reconnectBaseMs: 100 },
      );
    });
    afterAll(async () => {
      await session?.close();
      await gamma?.stop();
    });

    it('reports it unavailable with its error while the other server works', async () => {
      expect(session.status().gamma).toMatchObject({
        state: 'unavailable',
        lastError: expect.stringMatching(/ECONNREFUSED/),
      });
      const err: unknown = await session
        .callTool('gamma', 'execute_gamma_code', { code: '1' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServerUnavailableError);
      expect((err as Error).message).toMatch(
        /"gamma" \(http:\/\/127\.0\.0\.1:\d+\/mcp\) is unavailable: .*ECONNREFUSED/,
      );
      expect(output(await session.callTool('alpha__execute_alpha_code', { code: '1+1' })).stdout).toBe('2\n');
    });

    it('brings it into the same session once an executor listens on that port', async () => {
      const up = nextEvent(
        session,
        'serverUp',
        (e) => e.server === 'gamma' && e.tools.some((t) => t.qualifiedName === 'gamma__execute_gamma_code'),
      );
      gamma = await startExecutor({ port, config: executorConfig('gamma') });
      await up;
      expect(output(await session.callTool('gamma__execute_gamma_code', { code: '1+1' })).stdout).toBe('2\n');
    });
  });

  describe('when a connected server dies', () => {
    let delta: RunningExecutor;
    let watched: MultiServerSession;
    let idle: MultiServerSession;

    beforeAll(async () => {
      delta = await startExecutor({ config: executorConfig('delta') });
      const servers = [
        { name: 'alpha', url: alpha.url },
        { name: 'delta', url: delta.url },
      ];
      // `watched` also pings every 200 ms; `idle` relies on stream-drop hints and on its calls.
      [watched, idle] = await Promise.all([
        MultiServerSession.connect(servers, { healthIntervalMs: 200, reconnectBaseMs: 100 }),
        MultiServerSession.connect(servers, { healthIntervalMs: 600_000, reconnectBaseMs: 100 }),
      ]);
      await delta.stop('SIGKILL');
    });
    afterAll(async () => {
      await Promise.all([watched?.close(), idle?.close()]);
      await delta?.stop();
    });

    it('is marked unavailable without any call to it', async () => {
      await waitForState(watched, 'delta', 'unavailable');
      expect(watched.status().delta?.lastError).toMatch(/fetch failed|ECONN|closed|terminated/);
    });

    it('fails calls to it with an error naming the server and the cause', async () => {
      const err: unknown = await idle.callTool('delta__execute_delta_code', { code: '1+1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServerUnavailableError);
      const status = idle.status().delta;
      expect(status?.state).toBe('unavailable');
      expect((err as Error).message).toMatch(/^MCP server "delta" \(http:\/\/127\.0\.0\.1:\d+\/mcp\) is unavailable: /);
      expect((err as Error).message).toContain(status?.lastError);
    });

    it('keeps the other server working', async () => {
      expect(output(await idle.callTool('alpha__execute_alpha_code', { code: '1+1' })).stdout).toBe('2\n');
      expect(watched.listTools().every((t) => t.server === 'alpha')).toBe(true);
    });

    it('returns to the same session when it restarts on the same port', async () => {
      delta = await startExecutor({ port: delta.port, config: executorConfig('delta') });
      await waitForState(watched, 'delta', 'connected');
      expect(output(await watched.callTool('delta__execute_delta_code', { code: '1+1' })).stdout).toBe('2\n');
    });
  });

  describe('when a server stops answering but keeps its sockets open', () => {
    let zeta: RunningExecutor;
    let session: MultiServerSession;
    let idle: MultiServerSession;

    beforeAll(async () => {
      zeta = await startExecutor({ config: executorConfig('zeta') });
      const servers = [{ name: 'zeta', url: zeta.url }];
      [session, idle] = await Promise.all([
        MultiServerSession.connect(servers, { healthIntervalMs: 200, connectTimeoutMs: 1000, reconnectBaseMs: 100 }),
        MultiServerSession.connect(servers, {
          healthIntervalMs: 600_000,
          connectTimeoutMs: 1000,
          reconnectBaseMs: 100,
        }),
      ]);
    });
    afterAll(async () => {
      zeta?.proc.kill('SIGCONT');
      await Promise.all([session?.close(), idle?.close()]);
      await zeta?.stop();
    });

    it('is marked unavailable by the periodic health check', async () => {
      // SIGSTOP: no socket closes, so only an unanswered ping can tell.
      zeta.proc.kill('SIGSTOP');
      await waitForState(session, 'zeta', 'unavailable');
      expect(session.status().zeta?.lastError).toMatch(/timed out|timeout/i);
    });

    it('fails a timed-out call with ServerUnavailableError once a ping confirms the outage', async () => {
      expect(idle.status().zeta?.state).toBe('connected');
      const call = idle.callTool('zeta__execute_zeta_code', { code: '1+1' }, { timeoutMs: 500 });
      await expect(call).rejects.toThrow(ServerUnavailableError);
      expect(idle.status().zeta?.state).toBe('unavailable');
    });

    it('comes back once the server answers again', async () => {
      zeta.proc.kill('SIGCONT');
      await Promise.all([waitForState(session, 'zeta', 'connected'), waitForState(idle, 'zeta', 'connected')]);
      expect(output(await session.callTool('zeta__execute_zeta_code', { code: '1+1' })).stdout).toBe('2\n');
    });
  });
});

describe('MultiServerSession against a 2025-era server whose tools change', () => {
  const seen: { method?: string; authorization?: string }[] = [];
  const servers: McpServer[] = [];
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  const http = createHttpServer((req, res) => void serve(req, res));
  let session: MultiServerSession;

  /** A sessionful 2025-era MCP server (one McpServer per MCP session) listing `hello`. */
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    seen.push({ method: req.method, authorization: req.headers.authorization });
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (!transport) {
      const server = new McpServer({ name: 'tiny', version: '1.0.0' });
      server.registerTool('hello', { description: 'Says hello' }, () => ({
        content: [{ type: 'text', text: 'hello' }],
      }));
      const created = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      servers.push(server);
      await server.connect((transport = created));
    }
    await transport.handleRequest(req, res);
  }

  beforeAll(async () => {
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    const url = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
    let n = 0;
    const headers = () => Promise.resolve({ Authorization: `Bearer token-${++n}` });
    session = await MultiServerSession.connect([{ name: 'tiny', url, headers }], { era: 'legacy' });
  });
  afterAll(async () => {
    await session?.close();
    await Promise.all([...transports.values()].map((t) => t.close()));
    http.closeAllConnections();
    http.close();
  });

  it('resolves a header function on every request', () => {
    const authorizations = seen.map((r) => r.authorization);
    expect(authorizations.length).toBeGreaterThan(1);
    expect(new Set(authorizations).size).toBe(authorizations.length);
    expect(authorizations.every((a) => /^Bearer token-\d+$/.test(a ?? ''))).toBe(true);
  });

  it('refreshes the catalog on notifications/tools/list_changed', async () => {
    // The notification rides the client's GET stream: add the tool only once that stream is open.
    for (const deadline = Date.now() + 10_000; !seen.some((r) => r.method === 'GET');) {
      if (Date.now() > deadline) throw new Error('the client never opened its notification stream');
      await new Promise((r) => setTimeout(r, 20));
    }
    const changed = nextEvent(session, 'toolsChanged', (e) => e.tools.some((t) => t.qualifiedName === 'tiny__goodbye'));
    for (const s of servers)
      s.registerTool('goodbye', { description: 'Says goodbye' }, () => ({ content: [{ type: 'text', text: 'bye' }] }));
    await changed;
    expect(session.listTools().map((t) => t.qualifiedName)).toEqual(['tiny__hello', 'tiny__goodbye']);
    expect((await session.callTool('tiny__goodbye')).content).toEqual([{ type: 'text', text: 'bye' }]);
  });
});
