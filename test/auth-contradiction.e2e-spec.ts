import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXECUTOR_MAIN, ROOT } from './support/paths';
import { startRouter } from './support/router-process';

/** Operators who set Entra variables believe auth is on: beside an explicit no-op mode the apps refuse to start. */
const ENTRA = {
  ENTRA_CLIENT_ID: '11111111-1111-1111-1111-111111111111',
  ENTRA_TENANT_ID: '00000000-0000-0000-0000-000000000000',
};

describe('auth.mode noop beside Entra settings', () => {
  it('stops the demo executor (auth.mode: noop in its YAML) at start when ENTRA_CLIENT_ID and ENTRA_TENANT_ID are set, naming both settings', async () => {
    const proc = spawn(
      process.execPath,
      [EXECUTOR_MAIN, '--config', join(ROOT, 'examples', 'servers', 'demo', 'server.yaml'), '--port', '0'],
      {
        env: { ...process.env, ...ENTRA, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const [code] = (await once(proc, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(output).toMatch(/auth\.client_id \(from ENTRA_CLIENT_ID\): .*auth\.mode is 'noop'/);
    expect(output).toMatch(/auth\.tenant_id \(from ENTRA_TENANT_ID\): .*auth\.mode is 'noop'/);
  });

  it('stops a router whose YAML says auth.mode: noop beside an Entra client id', async () => {
    await expect(
      startRouter({
        auth: { mode: 'noop', client_id: 'router-app' },
        upstreams: [{ name: 'demo', url: 'http://127.0.0.1:9' }],
      }),
    ).rejects.toThrow(/auth\.client_id: .*auth\.mode is 'noop'.*STOA_AUTH_MODE=entra/s);
  });
});
