import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import { traceCarrier } from '@stoa/activity';

/**
 * MCP clients for upstreams that only speak the 2025 era (sessionful): one per caller principal and upstream,
 * so callers never share an upstream MCP session. Bounded (LRU) and closed when idle or evicted.
 */
export class LegacyClients {
  private readonly clients: LRUCache<string, Promise<Client>>;

  constructor(max: number, idleMs: number) {
    this.clients = new LRUCache<string, Promise<Client>>({
      max,
      ttl: idleMs,
      updateAgeOnGet: true,
      dispose: (client) => void client.then((c) => c.close()).catch(() => undefined),
    });
  }

  get size(): number {
    return this.clients.size;
  }

  /** The caller's client for `mcpUrl` (connected on first use: one initialize handshake per caller). */
  get(key: string, mcpUrl: string, authorization: string | undefined): Promise<Client> {
    const hit = this.clients.get(key);
    if (hit) return hit;
    const made = (async () => {
      const client = new Client(
        { name: 'stoa-connector', version: '0.1.0' },
        { versionNegotiation: { mode: 'legacy' } },
      );
      const headers = authorization ? { Authorization: authorization } : undefined;
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: headers && { headers }, fetch: tracedFetch }),
      );
      return client;
    })();
    made.catch(() => this.clients.delete(key)); // a failed connect is retried next time
    this.clients.set(key, made);
    return made;
  }

  /** Drops a caller's client (its upstream session ended or failed). */
  drop(key: string): void {
    this.clients.delete(key);
  }

  clear(): void {
    this.clients.clear();
  }
}

/**
 * fetch for the SDK transport: each request carries the active span's `traceparent` (and `tracestate`) as HTTP
 * headers, so a 2025-era upstream's spans are children of the connector's hop (2025 requests have no `_meta` for
 * it). Untraced, the request goes out unchanged.
 */
const tracedFetch: typeof fetch = (input, init) => {
  const trace = traceCarrier();
  if (!trace.traceparent) return fetch(input, init);
  const headers = new Headers(init?.headers);
  for (const [k, v] of Object.entries(trace)) headers.set(k, v);
  return fetch(input, { ...init, headers });
};
