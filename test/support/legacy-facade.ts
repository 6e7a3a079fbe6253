import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP front of a Stoa server that makes it look like a 2025-era-only MCP server. */
export interface LegacyFacade {
  /** The facade's MCP endpoint (`…/mcp`). */
  mcpUrl: string;
  close: () => Promise<void>;
}

/**
 * A real reverse proxy in front of `target` (a Stoa server's base URL) that answers as a 2025-era server does:
 * no `/catalog`, `/health` and 2026-07-28 requests (`server/discover`, `MCP-Protocol-Version: 2026-07-28`)
 * refused with 404/400. Everything else — 2025-11-25 sessions — goes through unchanged, headers included,
 * answers streamed back. A connector in front of it therefore speaks the MCP SDK client's 2025 sessions.
 */
export async function startLegacyFacade(target: string): Promise<LegacyFacade> {
  const base = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end();
      if (modern(req, body)) return void res.writeHead(400, { 'content-type': 'text/plain' }).end('2025-era only');
      const headers = { ...req.headers, host: base.host };
      const out = request(
        { host: base.hostname, port: base.port, path: req.url, method: req.method, headers },
        (up: IncomingMessage) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', (err) => res.writeHead(502).end(err.message));
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    mcpUrl: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function modern(req: IncomingMessage, body: Buffer): boolean {
  if (req.headers['mcp-protocol-version'] === '2026-07-28') return true;
  try {
    return (JSON.parse(body.toString() || '{}') as { method?: string }).method === 'server/discover';
  } catch {
    return false;
  }
}
