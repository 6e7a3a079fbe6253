import { randomUUID } from 'node:crypto';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Principal } from '@stoa/core';
import type { McpEndpoint } from './mcp-endpoint';

/**
 * Serves an endpoint's tools over this process's stdin/stdout (both eras: the opening exchange picks one) as
 * `principal` (stdio has no bearer token: the process runs as whoever started it). Resolves when the client
 * closes the connection (stdin ends).
 */
export async function serveMcpStdio(endpoint: McpEndpoint, principal: Principal): Promise<void> {
  const closed = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  // One stdio connection per process: its id plays the part of a 2025-era MCP session id.
  const fixed = { principal, connectionId: `stdio-${randomUUID()}` };
  const handle = serveStdio((ctx) => endpoint.buildServer(ctx.era, fixed));
  await closed;
  await handle.close();
}
