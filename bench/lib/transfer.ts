/** Helpers of the transfer bench: the HTTP sink child, streamed uploads, the peer wire body, executor logs, output. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { emit, percentile } from './bench';
import type { SinkReady } from './http-sink';
import { ADMIN } from '../../test/support/admin';

/** The bare HTTP sink (bench/lib/http-sink.ts) in its own process. */
export async function startSink(benchDir: string): Promise<{ url: string; stop: () => void }> {
  const root = dirname(benchDir);
  const child = spawn(process.execPath, ['--import', 'tsx', join(benchDir, 'lib', 'http-sink.ts')], {
    cwd: root,
    stdio: ['ignore', 2, 2, 'ipc'],
    env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json') },
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: SinkReady) => resolve(m.port));
    child.once('exit', (code, signal) => reject(new Error(`http sink exited (${signal ?? code})`)));
  });
  return { url: `http://127.0.0.1:${port}/`, stop: () => void child.kill() };
}

const CHUNK = 256 * 1024;

/**
 * POSTs `parts` as one body streamed in 256 KiB chunks (undici, keep-alive, exact Content-Length); the ms run
 * until the answer's JSON is read. With `sinkBytes`, checks that the sink counted that many bytes.
 */
export async function postChunks(
  url: string,
  contentType: string,
  parts: Buffer[],
  headers: Record<string, string>,
  sinkBytes?: number,
): Promise<{ ms: number; json: Record<string, unknown> }> {
  function* chunks(): Generator<Buffer> {
    for (const p of parts) for (let o = 0; o < p.length; o += CHUNK) yield p.subarray(o, o + CHUNK);
  }
  const length = parts.reduce((n, p) => n + p.length, 0);
  const t0 = performance.now();
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': contentType, 'content-length': String(length), ...headers },
    body: Readable.from(chunks()),
  });
  const json = (await res.body.json()) as Record<string, unknown>;
  const ms = performance.now() - t0;
  if (res.statusCode !== 200)
    throw new Error(`POST ${url}: HTTP ${res.statusCode} ${JSON.stringify(json).slice(0, 500)}`);
  if (sinkBytes !== undefined && json.bytes !== sinkBytes)
    throw new Error(`sink counted ${String(json.bytes)} of ${sinkBytes} bytes`);
  return { ms, json };
}

/**
 * The body a sender POSTs to /object-transfer/receive (`{variable_name, metadata, session_id, data: base64}`),
 * built once; `parts(id)` gives it with `metadata.transfer_id = id` (32 hex chars, so the length never changes).
 */
export function jsonBody(
  pickle: Buffer,
  variableName: string,
  sessionId: string,
  serializer: string,
): { length: number; parts: (id?: string) => Buffer[] } {
  const data = Buffer.from(pickle.toString('base64'), 'latin1');
  const suffix = Buffer.from('"}');
  const prefix = (id: string) => {
    const head = JSON.stringify({
      variable_name: variableName,
      metadata: { source_server: 'bench', transfer_id: id, serializer },
      session_id: sessionId,
    });
    return Buffer.from(`${head.slice(0, -1)},"data":"`);
  };
  const length = prefix('0'.repeat(32)).length + data.length + suffix.length;
  return { length, parts: (id = '0'.repeat(32)) => [prefix(id), data, suffix] };
}

/**
 * `duration_ms` an executor logged for a transfer (server clock, ms resolution, no MCP around it). The log row
 * is written after the answer, so a missing row is looked for again for up to a second.
 */
export async function loggedMs(
  executorUrl: string,
  transferId: string | undefined,
  direction: 'in' | 'out',
): Promise<number> {
  if (!transferId) throw new Error(`no transfer id to look up (${direction})`);
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await fetch(`${executorUrl}/admin/v1/transfers?direction=${direction}&limit=50`, { headers: ADMIN });
    const { transfers } = (await res.json()) as {
      transfers: { transfer_id: string; success: boolean; duration_ms: number }[];
    };
    const row = transfers.find((t) => t.transfer_id === transferId);
    if (row?.success) return row.duration_ms;
    if (row) throw new Error(`transfer ${transferId} failed in ${executorUrl}'s log`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no '${direction}' transfer ${transferId} in ${executorUrl}'s log`);
}

/** Peak RSS (VmHWM) of a process in MB. */
export const peakRssMb = (pid: number | undefined): number =>
  pid ? Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024 : 0;

export interface Stats {
  p50: number;
  p90: number;
  n: number;
}

/** Nearest-rank p50 and p90. */
export const stats = (xs: number[]): Stats => ({ p50: percentile(xs, 50), p90: percentile(xs, 90), n: xs.length });

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/** One result line: p50 (as `value` and `median_ms`), p90, MB/s of the object's size (null for a remainder ≤ 0); ratio = p50 / the baseline's p50. */
export function emitSize(
  bench: string,
  subject: string,
  mb: number,
  s: Stats,
  baseline?: { name: string; s: Stats },
  extra: Record<string, unknown> = {},
): void {
  const line: Record<string, unknown> = {
    bench,
    subject,
    size_mb: mb,
    metric: 'p50_ms',
    value: round(s.p50),
    median_ms: round(s.p50),
    p90_ms: round(s.p90),
    n: s.n,
    mb_per_s: s.p50 > 0 ? round(mb / (s.p50 / 1000)) : null,
  };
  if (baseline)
    Object.assign(line, {
      baseline: baseline.name,
      baseline_median_ms: round(baseline.s.p50),
      baseline_mb_per_s: round(mb / (baseline.s.p50 / 1000)),
      ratio: round(s.p50 / baseline.s.p50, 3),
    });
  emit({ ...line, ...extra });
}
