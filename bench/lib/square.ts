import { Pool } from 'undici';
import { devToken, rawToolCall } from '../../test/support/ts-clients';

/** One stateless 2026-07-28 tool call to a square as agent principal `who`; its JSON answer (throws on an error). */
export async function squareCall(
  origin: string,
  who: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const r = await rawToolCall(`${origin}/mcp`, tool, args, { token: devToken(who) });
  if (r.isError) throw new Error(`${tool} failed: ${r.text}`);
  return r.json;
}

/** A tools/call as a raw 2026-07-28 request, as undici sends it. */
export function toolCallRequest(token: string, tool: string, args: Record<string, unknown>) {
  return {
    path: '/mcp',
    method: 'POST' as const,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': tool,
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
  };
}

/**
 * A lean square client: raw tool calls over `connections` keep-alive connections (undici), so the load
 * generator's own overhead (a fetch per call) stays out of the figures. `call` answers the tool's JSON.
 */
export function squarePool(origin: string, connections: number) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const tokens = new Map<string, string>(); // made once per agent: the load generator's CPU is measured
  const token = (who: string) => {
    let t = tokens.get(who);
    if (!t) tokens.set(who, (t = devToken(who)));
    return t;
  };
  return {
    async call(who: string, tool: string, args: Record<string, unknown>): Promise<string> {
      const r = await pool.request(toolCallRequest(token(who), tool, args));
      const text = await r.body.text();
      if (r.statusCode !== 200 || text.includes('"isError":true')) throw new Error(`${tool}: ${r.statusCode} ${text}`);
      return text;
    },
    close: () => pool.close(),
  };
}
