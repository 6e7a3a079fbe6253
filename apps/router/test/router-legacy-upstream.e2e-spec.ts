import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RunningRouter } from '../../../test/support/router-process';
import { devToken, v2Client } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

/**
 * An upstream that only speaks the 2025 era (sessionful, no /catalog, no /health): the router learns its tools
 * with tools/list and gives every caller an MCP session of their own there.
 */
describe('router in front of a 2025-era-only MCP server', () => {
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  const http = createServer((req, res) => void serve(req, res));
  let router: RunningRouter;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (!transport) {
      const server = new McpServer({ name: 'oldie', version: '1.0.0' });
      server.registerTool('oldie_whoami', { description: 'The upstream MCP session this call arrived on' }, (ctx) => ({
        content: [{ type: 'text', text: String(ctx.sessionId) }],
      }));
      const created = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      await server.connect((transport = created));
    }
    await transport.handleRequest(req, res);
  }

  beforeAll(async () => {
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    const url = `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`;
    router = await startRouter({ upstreams: [{ name: 'oldie', url, auth: { mode: 'passthrough', audience: 'dev' } }] });
  });
  afterAll(async () => {
    await router?.stop();
    await Promise.all([...transports.values()].map((t) => t.close()));
    http.closeAllConnections();
    http.close();
  });

  it('proxies its tools to modern clients, one upstream session per caller', async () => {
    const health = (await (await fetch(`${router.url}/admin/v1/upstreams`, { headers: ADMIN })).json()) as {
      upstreams: { state: string; era: string; tools: number }[];
    };
    expect(health.upstreams[0]).toMatchObject({ state: 'healthy', era: 'legacy', tools: 1 });
    const alice = await v2Client(router.mcpUrl, 'auto', devToken('alice'));
    const bob = await v2Client(router.mcpUrl, 'auto', devToken('bob'));
    try {
      expect(await alice.listTools()).toContain('oldie_whoami');
      const a1 = (await alice.call('oldie_whoami', {})).text;
      const a2 = (await alice.call('oldie_whoami', {})).text;
      const b1 = (await bob.call('oldie_whoami', {})).text;
      expect(a1).toMatch(/^[0-9a-f-]{36}$/);
      expect(a2).toBe(a1);
      expect(b1).not.toBe(a1);
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});
