import type { LogLevel, ToolContext } from '@stoa/mcp';
import { describe, expect, it } from 'vitest';
import { relayLog } from './proxy-tool';

function context(logLevel: LogLevel | undefined) {
  const sent: unknown[][] = [];
  const ctx = {
    logLevel,
    log: (...args: unknown[]) => {
      sent.push(args);
      return Promise.resolve();
    },
  } as unknown as ToolContext;
  return { ctx, sent };
}

describe('relayLog', () => {
  it('asks the upstream for logs from the caller’s level and hands each message to the caller’s log', () => {
    const { ctx, sent } = context('info');
    const relay = relayLog(ctx);
    expect(relay?.level).toBe('info');
    relay?.send('warning', 'disk nearly full', 'demo.kernel');
    expect(sent).toEqual([['warning', 'disk nearly full', 'demo.kernel']]);
  });

  it('relays nothing for a caller that gets no logs (a 2026-07-28 request without a log level)', () => {
    expect(relayLog(context(undefined).ctx)).toBeUndefined();
  });
});
