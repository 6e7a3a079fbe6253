/**
 * transfer: peer object transfer between two executors. `alpha_send(data_ref, to='beta')` on executor alpha has
 * its kernel pickle a variable into a socket that alpha relays to beta's `POST /object-transfer/receive`, which
 * streams it into beta's kernel (Stoa's binary body). For 1, 10 and 100 MB numpy uint8 arrays (made in alpha's kernel beforehand, not
 * timed) the bench times, interleaved per round with the order rotated, the send end to end next to a raw HTTP
 * upload of the same bytes to a bare Node sink, plus the parts of the send (see bench/README.md#transfer).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startExecutor, type RunningExecutor } from '../test/support/executor-process';
import { freePort } from '../test/support/ports';
import { devToken } from '../test/support/ts-clients';
import { note, quietNestLogger, runBench, SMOKE } from './lib/bench';
import { connect, type BenchClient } from './lib/mcp';
import { emitSize, jsonBody, loggedMs, peakRssMb, postChunks, startSink, stats } from './lib/transfer';

const BENCH = 'transfer';
const MB = 1_000_000;
/** Fewer rounds for the big sizes keep the whole run around a minute on the 2-core VM. */
const SIZES = SMOKE
  ? [{ mb: 1, warmup: 1, samples: 1 }]
  : [
      { mb: 1, warmup: 3, samples: 30 },
      { mb: 10, warmup: 2, samples: 15 },
      { mb: 100, warmup: 1, samples: 8 },
    ];
const SUBJECTS = ['peer-send', 'local-send', 'http-upload', 'http-upload-json', 'receive-direct'] as const;
type Subject = (typeof SUBJECTS)[number];

interface Ctx {
  a: BenchClient;
  b: BenchClient;
  alpha: RunningExecutor;
  beta: RunningExecutor;
  alphaSid: string;
  betaSid: string;
  sinkUrl: string;
  token: string;
}

const exec = async (c: BenchClient, tool: string, code: string, sid: string | undefined) => {
  const r = JSON.parse(await c.call(tool, { code, ...(sid ? { execution_session_id: sid } : {}) })) as {
    success?: boolean;
    stdout?: string;
    session_id?: string;
  };
  if (r.success === false) throw new Error(`${tool} failed: ${JSON.stringify(r).slice(0, 800)}`);
  return { stdout: r.stdout ?? '', sessionId: r.session_id ?? sid ?? '' };
};

async function main(): Promise<void> {
  quietNestLogger();
  const betaPort = await freePort();
  const exportDir = mkdtempSync(join(tmpdir(), 'stoa-bench-exports-'));
  const beta = await startExecutor({ port: betaPort, config: { name: 'beta' } });
  const alpha = await startExecutor({
    config: {
      name: 'alpha',
      publishers: { local: { base_dir: exportDir } },
      peers: { beta: `http://127.0.0.1:${betaPort}` },
    },
  });
  const sink = await startSink(__dirname);
  const token = devToken('bench');
  const a = await connect(alpha.mcpUrl, { token });
  const b = await connect(beta.mcpUrl, { token });
  try {
    const alphaSid = (await exec(a, 'execute_alpha_code', 'import hashlib, numpy as np', undefined)).sessionId;
    const betaSid = (await exec(b, 'execute_beta_code', 'import hashlib', undefined)).sessionId;
    const ctx: Ctx = { a, b, alpha, beta, alphaSid, betaSid, sinkUrl: sink.url, token };
    for (const size of SIZES) await measureSize(size, ctx);
    note(
      `peak RSS: alpha executor ${peakRssMb(alpha.proc.pid).toFixed(0)} MB, beta executor ${peakRssMb(beta.proc.pid).toFixed(0)} MB`,
    );
    await a.close();
    await b.close();
  } catch (err) {
    note(`alpha logs:\n${alpha.logs()}\nbeta logs:\n${beta.logs()}`);
    throw err;
  } finally {
    sink.stop();
    await alpha.stop();
    await beta.stop();
    for (const dir of [dirname(alpha.dataDir), dirname(beta.dataDir), exportDir])
      rmSync(dir, { recursive: true, force: true });
  }
}

interface Sent {
  ms: number;
  transferId: string;
  pickleBytes: number;
  serializer: string;
  remote: string;
}

/** `alpha_send` of `src`, to beta as `dst` or to 'local'; throws unless it succeeded. */
async function send(ctx: Ctx, src: string, dst: string, to: 'beta' | 'local'): Promise<Sent> {
  const args =
    to === 'beta'
      ? { data_ref: src, to, name: dst, session_id: ctx.betaSid, execution_session_id: ctx.alphaSid }
      : { data_ref: src, to, execution_session_id: ctx.alphaSid };
  const t0 = performance.now();
  const text = await ctx.a.call('alpha_send', args);
  const ms = performance.now() - t0;
  const r = JSON.parse(text) as {
    success?: boolean;
    transfer_id?: string;
    size_bytes?: number;
    serializer?: string;
    remote_uri?: string;
  };
  if (!r.success || !r.transfer_id || !r.remote_uri)
    throw new Error(`alpha_send to ${to} failed: ${text.slice(0, 800)}`);
  if (to === 'beta' && !r.remote_uri.startsWith(`Injected '${dst}' into beta kernel`))
    throw new Error(`unexpected peer answer: ${r.remote_uri}`);
  return {
    ms,
    transferId: r.transfer_id,
    pickleBytes: r.size_bytes ?? 0,
    serializer: r.serializer ?? '?',
    remote: r.remote_uri,
  };
}

/** What one measured round yields besides the subjects' own ms: ids to look up in the executors' logs. */
interface RoundIds {
  peer?: string;
  local?: string;
  direct?: string;
}

async function measureSize(size: (typeof SIZES)[number], ctx: Ctx): Promise<void> {
  const { a, b, alphaSid, betaSid } = ctx;
  const bytes = size.mb * MB;
  const [src, dst, direct] = [`obj_${size.mb}mb`, `recv_${size.mb}mb`, `direct_${size.mb}mb`];
  // Not timed: the object, the raw payload, and the body alpha would send (from an untimed local send's pickle).
  const hash = (
    await exec(
      a,
      'execute_alpha_code',
      `${src} = np.random.default_rng(${size.mb}).integers(0, 256, ${bytes}, dtype=np.uint8)\nprint(hashlib.sha256(${src}).hexdigest())`,
      alphaSid,
    )
  ).stdout.trim();
  const raw = [randomBytes(bytes)];
  const first = await send(ctx, src, dst, 'local');
  const body = jsonBody(readFileSync(first.remote), direct, betaSid, first.serializer);
  note(
    `${size.mb} MB: pickle ${first.pickleBytes} bytes via ${first.serializer}; base64 JSON body ${body.length} bytes`,
  );

  const auth = { authorization: `Bearer ${ctx.token}` };
  const subjects: Record<Subject, (ids: RoundIds) => Promise<number>> = {
    'peer-send': async (ids) => {
      const s = await send(ctx, src, dst, 'beta');
      ids.peer = s.transferId;
      return s.ms;
    },
    'local-send': async (ids) => {
      const s = await send(ctx, src, dst, 'local');
      ids.local = s.transferId;
      return s.ms;
    },
    'http-upload': async () => (await postChunks(ctx.sinkUrl, 'application/octet-stream', raw, {}, bytes)).ms,
    'http-upload-json': async () =>
      (await postChunks(ctx.sinkUrl, 'application/json', body.parts(), {}, body.length)).ms,
    'receive-direct': async (ids) => {
      const id = randomBytes(16).toString('hex');
      const r = await postChunks(`${ctx.beta.url}/object-transfer/receive`, 'application/json', body.parts(id), auth);
      if (!r.json.success) throw new Error(`beta refused the direct POST: ${JSON.stringify(r.json)}`);
      ids.direct = id;
      return r.ms;
    },
  };

  const samples = Object.fromEntries(SUBJECTS.map((s) => [s, [] as number[]])) as Record<Subject, number[]>;
  const parts = {
    peerOut: [] as number[],
    localOut: [] as number[],
    peerIn: [] as number[],
    directIn: [] as number[],
    directRead: [] as number[],
    senderRest: [] as number[],
  };
  const t0 = performance.now();
  note(`${size.mb} MB: ${size.warmup} warm-up + ${size.samples} measured rounds (${SUBJECTS.join(', ')}; interleaved)`);
  for (let i = 0; i < size.warmup + size.samples; i++) {
    const ids: RoundIds = {};
    const ms: Partial<Record<Subject, number>> = {};
    for (let j = 0; j < SUBJECTS.length; j++) {
      const subject = SUBJECTS[(i + j) % SUBJECTS.length] as Subject;
      ms[subject] = await subjects[subject](ids);
    }
    if (i === 0) await verify(ctx, size.mb, bytes, hash, [dst, direct]);
    if (i < size.warmup) continue;
    for (const s of SUBJECTS) samples[s].push(ms[s] as number);
    const [peerOut, localOut, peerIn, directIn] = await Promise.all([
      loggedMs(ctx.alpha.url, ids.peer, 'out'),
      loggedMs(ctx.alpha.url, ids.local, 'out'),
      loggedMs(ctx.beta.url, ids.peer, 'in'),
      loggedMs(ctx.beta.url, ids.direct, 'in'),
    ]);
    parts.peerOut.push(peerOut);
    parts.localOut.push(localOut);
    parts.peerIn.push(peerIn);
    parts.directIn.push(directIn);
    parts.directRead.push((ms['receive-direct'] as number) - directIn);
    parts.senderRest.push(peerOut - localOut - (ms['receive-direct'] as number));
  }
  await exec(b, 'execute_beta_code', `del ${dst}, ${direct}`, betaSid);
  await exec(a, 'execute_alpha_code', `del ${src}`, alphaSid);
  note(`${size.mb} MB: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  report(size.mb, samples, parts, first);
}

/** Once per size: both copies in beta are the same array as alpha's. */
async function verify(ctx: Ctx, mb: number, bytes: number, hash: string, names: string[]): Promise<void> {
  const code = names
    .map((n) => `print(type(${n}).__name__, ${n}.dtype, len(${n}), hashlib.sha256(${n}).hexdigest())`)
    .join('\n');
  const seen = (await exec(ctx.b, 'execute_beta_code', code, ctx.betaSid)).stdout.trim().split('\n');
  const want = `ndarray uint8 ${bytes} ${hash}`;
  for (const [k, line] of seen.entries())
    if (line !== want) throw new Error(`beta's ${names[k]} is '${line}', expected '${want}'`);
  note(`${mb} MB: verified in beta (${names.join(', ')}: ndarray uint8, ${bytes} bytes, sha256 matches alpha's)`);
}

function report(
  mb: number,
  samples: Record<Subject, number[]>,
  parts: Record<'peerOut' | 'localOut' | 'peerIn' | 'directIn' | 'directRead' | 'senderRest', number[]>,
  first: Sent,
): void {
  const upload = stats(samples['http-upload']);
  const uploadJson = stats(samples['http-upload-json']);
  const peer = stats(samples['peer-send']);
  const base = { name: 'http-upload', s: upload };
  emitSize(BENCH, 'http-upload', mb, upload);
  emitSize(BENCH, 'peer-send', mb, peer, base, { pickle_bytes: first.pickleBytes, serializer: first.serializer });
  emitSize(BENCH, 'local-send', mb, stats(samples['local-send']), base);
  emitSize(BENCH, 'http-upload-json', mb, uploadJson, base);
  emitSize(BENCH, 'receive-direct', mb, stats(samples['receive-direct']), { name: 'http-upload-json', s: uploadJson });
  // Parts of peer-send (executors' logs at ms resolution, and per-round differences); they add up to peer-send-server.
  const part = (subject: string, xs: number[]) =>
    emitSize(BENCH, subject, mb, stats(xs), undefined, {
      share_of_peer_send: Number((stats(xs).p50 / peer.p50).toFixed(3)),
    });
  part('peer-send-server', parts.peerOut);
  part('part-dump', parts.localOut);
  part('part-sender-rest', parts.senderRest);
  part('part-receive-read-decode', parts.directRead);
  part('part-receive-inject', parts.peerIn);
}

runBench(BENCH, main);
