import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** A TS SDK v2 client in the 2026-07-28 stateless era ('auto' negotiation), as agents connect. */
export interface BenchClient {
  /** Calls a tool; throws on a protocol error or an `isError` result; returns the text content. */
  call: (tool: string, args: Record<string, unknown>) => Promise<string>;
  /** `tools/list` as the client sees it (all pages aggregated). */
  listTools: () => Promise<Record<string, unknown>[]>;
  close: () => Promise<void>;
}

export interface ConnectOptions {
  /** Sent as `Authorization: Bearer <token>` on every request. */
  token?: string;
}

export async function connect(mcpUrl: string, opts: ConnectOptions = {}): Promise<BenchClient> {
  const client = new Client({ name: 'stoa-bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const transportOpts = opts.token
    ? { requestInit: { headers: { Authorization: `Bearer ${opts.token}` } } }
    : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), transportOpts));
  return {
    call: async (tool, args) => {
      const r = await client.callTool({ name: tool, arguments: args });
      const text = ((r.content as { type: string; text?: string }[]) ?? []).map((c) => c.text ?? '').join('');
      if (r.isError) throw new Error(`${tool} failed: ${text}`);
      return text;
    },
    listTools: async () => (await client.listTools()).tools,
    close: () => client.close(),
  };
}
