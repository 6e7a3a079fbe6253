import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { devToken } from '../../../test/support/ts-clients';

/** Writes one plain stderr line and one Python warning (to stderr), then prints to stdout. */
const CODE = [
  'import sys, warnings',
  "print('plain line on stderr', file=sys.stderr)",
  "warnings.warn('careful now')",
  "print('stdout is not logged')",
].join('\n');

type Logged = { level: string; data: unknown; logger?: string };

/** A 2025-era client (SDK 1.x) whose own MCP session asked for `level`. */
async function legacyClient(url: string, who: string, level: 'warning' | 'debug') {
  const logs: Logged[] = [];
  const client = new V1Client({ name: `log-${who}`, version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params as Logged));
  const auth = { requestInit: { headers: { Authorization: `Bearer ${devToken(who)}` } } };
  await client.connect(new V1Transport(new URL(url), auth));
  await client.setLoggingLevel(level);
  return { client, logs };
}

describe('logging capability: kernel stderr as notifications/message at the client level', () => {
  let ex: RunningExecutor;
  beforeAll(async () => {
    ex = await startExecutor();
  });
  afterAll(async () => {
    await ex?.stop();
  });

  it('keeps logging/setLevel per 2025-era client: warning gets the warning only, debug gets every stderr line', async () => {
    const quiet = await legacyClient(ex.mcpUrl, 'quiet', 'warning');
    const chatty = await legacyClient(ex.mcpUrl, 'chatty', 'debug');
    try {
      expect(quiet.client.getServerCapabilities()?.logging).toEqual({});
      for (const c of [quiet, chatty])
        await c.client.callTool({ name: 'execute_demo_code', arguments: { code: CODE } });
      expect(quiet.logs.map((l) => l.level)).toEqual(['warning']);
      expect(String(quiet.logs[0]?.data)).toContain('UserWarning: careful now');
      expect(quiet.logs[0]?.logger).toBe('demo.kernel');
      const lines = chatty.logs.map((l) => `${l.level} ${String(l.data)}`);
      expect(lines[0]).toBe('info plain line on stderr');
      expect(lines.some((l) => l.startsWith('warning ') && l.includes('UserWarning: careful now'))).toBe(true);
      expect(lines.some((l) => l.includes('stdout is not logged'))).toBe(false);
    } finally {
      await quiet.client.close();
      await chatty.client.close();
    }
  });

  it('sends 2026-07-28 clients log messages only when their request carries a log level', async () => {
    const logs: Logged[] = [];
    const client = new Client({ name: 'log-modern', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    client.setNotificationHandler('notifications/message', (n) => void logs.push(n.params as Logged));
    const auth = { requestInit: { headers: { Authorization: `Bearer ${devToken('modern')}` } } };
    await client.connect(new StreamableHTTPClientTransport(new URL(ex.mcpUrl), auth));
    try {
      await client.callTool({ name: 'execute_demo_code', arguments: { code: CODE } });
      expect(logs).toEqual([]);
      await client.callTool({
        name: 'execute_demo_code',
        arguments: { code: CODE },
        _meta: { [LOG_LEVEL_META_KEY]: 'warning' },
      });
      expect(logs.map((l) => l.level)).toEqual(['warning']);
      expect(String(logs[0]?.data)).toContain('careful now');
    } finally {
      await client.close();
    }
  });
});
