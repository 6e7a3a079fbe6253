import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';

/** Azurite's well-known development account (public, documented by Microsoft; not a secret). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface Azurite {
  port: number;
  /** `https://…`-style account URL of the emulator (plain http on loopback). */
  accountUrl: string;
  connectionString: string;
  stop(): Promise<void>;
}

/** Starts a real Azurite blob emulator (npm package) on a free loopback port, with its own storage dir. */
export async function startAzurite(): Promise<Azurite> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'stoa-azurite-'));
  const main = require.resolve('azurite/dist/src/blob/main.js');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      main,
      '--silent',
      '--disableTelemetry',
      '--location',
      dir,
      '--blobHost',
      '127.0.0.1',
      '--blobPort',
      String(port),
      '--skipApiVersionCheck',
      '--loose',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const accountUrl = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Azurite exited (${child.exitCode}): ${output}`);
    const up = await fetch(`http://127.0.0.1:${port}/${AZURITE_ACCOUNT}?comp=list`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`Azurite did not listen on ${port} within 30 s: ${output}`);
    await new Promise((r) => setTimeout(r, 100)); // polling a port that is not open yet; there is no event to wait on
  }
  return {
    port,
    accountUrl,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${accountUrl};`,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
