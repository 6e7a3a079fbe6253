import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';

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
        new StreamableHTTPClientTransport(new URL(mcpUrl), headers ? { requestInit: { headers } } : undefined),
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
