import { Pool } from 'undici';
import { devToken } from '../../test/support/ts-clients';

/**
 * Raw 2026-07-28 `tools/call` requests to a square over keep-alive connections (undici), as one agent per
 * principal: little client CPU, so the figures are the square's.
 */
export class SquareLoad {
  private readonly pool: Pool;

  constructor(
    readonly origin: string,
    connections: number,
  ) {
    this.pool = new Pool(origin, { connections, pipelining: 1 });
  }

  /** Calls `tool` as agent principal `who`; returns the tool's JSON answer (throws on an error result). */
  async call(who: string, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const r = await this.pool.request({
      path: '/mcp',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': tool,
        authorization: `Bearer ${devToken(who)}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: tool,
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const raw = await r.body.text();
    const msg = JSON.parse(raw.startsWith('{') ? raw : (/^data: (.*)$/m.exec(raw)?.[1] ?? raw)) as {
      result?: { isError?: boolean; content: { text: string }[] };
      error?: { message: string };
    };
    if (!msg.result) throw new Error(`${tool}: ${msg.error?.message ?? raw.slice(0, 200)}`);
    const text = msg.result.content.map((c) => c.text).join('');
    if (msg.result.isError) throw new Error(`${tool} failed: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
