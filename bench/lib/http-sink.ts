/**
 * Child process for the transfer bench: a bare Node HTTP server on 127.0.0.1 that reads each request body,
 * throws it away and answers `{"bytes": n}`. It is the floor for moving bytes over loopback HTTP into
 * another Node process (no framework, no buffering, no parsing).
 *
 * Start with `node --import tsx bench/lib/http-sink.ts` and an IPC channel; it sends `{type: 'ready', port}`
 * once it listens and exits when the parent disconnects.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkReady {
  type: 'ready';
  port: number;
}

function main(): void {
  if (!process.send) throw new Error('http-sink needs an IPC channel');
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ bytes }));
    });
    req.on('error', () => res.destroy());
  });
  // Large uploads on a slow machine must not hit the default request timeout.
  server.requestTimeout = 0;
  server.listen(0, '127.0.0.1', () => {
    const ready: SinkReady = { type: 'ready', port: (server.address() as AddressInfo).port };
    process.send?.(ready);
  });
  process.on('disconnect', () => process.exit(0));
}

main();
