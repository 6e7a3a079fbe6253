/**
 * auth-overhead: what Entra ID token validation adds to a trivial MCP tool call
 * (`demo_list_sessions({summary_only: true})`, touches no kernel). Two executors run side by side —
 * one validating Entra tokens against a real local HTTPS OIDC issuer, one with no-op auth — and the
 * same client library calls both with the same bearer token. A third subject times
 * `EntraTokenVerifier.verify` alone (in a child process that trusts the issuer's CA), to show how much
 * of the added time is the signature/claims check itself. The three are interleaved call by call
 * (rotating order); the JWKS is fetched during warm-up and must not be refetched while measuring.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startExecutor, type RunningExecutor } from '../test/support/executor-process';
import { TestOidcIssuer } from '../test/support/oidc-issuer';
import { emit, emitFigures, note, quietNestLogger, rounds, summarize, runBench } from './lib/bench';
import type { VerifyReply, VerifyRequest } from './lib/entra-verify-worker';
import { connect } from './lib/mcp';

const BENCH = 'auth-overhead';
const WARMUP = rounds(50, 1);
const SAMPLES = rounds(400, 3);
const GOAL_ADDED_MS = 0.3;

/** The verifier child: `verify(token)` → ms measured inside the child; `backToBack` → n such figures taken in a row. */
interface VerifyWorker {
  verify: (token: string) => Promise<{ ms: number; principal: string }>;
  backToBack: (token: string, n: number) => Promise<number[]>;
  stop: () => void;
}

type Reply = Exclude<VerifyReply, { type: 'ready' }>;

async function startVerifyWorker(idp: TestOidcIssuer): Promise<VerifyWorker> {
  const root = dirname(__dirname);
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(__dirname, 'lib', 'entra-verify-worker.ts')],
    {
      cwd: root,
      // The child's stdout goes to our stderr: stdout stays JSON lines.
      stdio: ['ignore', 2, 2, 'ipc'],
      env: {
        ...process.env,
        TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'),
        NODE_EXTRA_CA_CERTS: idp.caFile,
        STOA_BENCH_ENTRA: JSON.stringify({ tenant_id: idp.tenant, client_id: idp.clientId, authority: idp.authority }),
      },
    },
  );
  const pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let onReady!: () => void;
  let onFail!: (e: Error) => void;
  const ready = new Promise<void>((resolve, reject) => ((onReady = resolve), (onFail = reject)));
  child.on('message', (m: VerifyReply) => {
    if ('type' in m) return onReady();
    const p = pending.get(m.id);
    pending.delete(m.id);
    if ('error' in m) p?.reject(new Error(`verify failed in the worker: ${m.error}`));
    else p?.resolve(m);
  });
  child.once('exit', (code, signal) => {
    const err = new Error(`verify worker exited (${signal ?? code})`);
    onFail(err);
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  });
  await ready;
  const request = (req: Omit<VerifyRequest, 'id'>) =>
    new Promise<Reply>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, ...req } satisfies VerifyRequest);
    });
  return {
    verify: async (token) => {
      const r = await request({ token });
      if (!('ms' in r)) throw new Error('verify worker: unexpected reply');
      return r;
    },
    backToBack: async (token, n) => {
      const r = await request({ token, backToBack: n });
      if (!('samples' in r) || r.samples.length !== n) throw new Error('verify worker: unexpected reply');
      return r.samples;
    },
    stop: () => {
      if (child.exitCode === null) child.kill();
    },
  };
}

async function main(): Promise<void> {
  quietNestLogger();
  const idp = await TestOidcIssuer.start();
  const executors: RunningExecutor[] = [];
  let worker: VerifyWorker | undefined;
  try {
    const env = { NODE_EXTRA_CA_CERTS: idp.caFile };
    // Default JWKS cache settings (600 s max age, 30 s cooldown), as in production.
    const entra = await startExecutor({
      config: { auth: { tenant_id: idp.tenant, client_id: idp.clientId, authority: idp.authority } },
      env,
    });
    executors.push(entra);
    const noop = await startExecutor({ env });
    executors.push(noop);
    worker = await startVerifyWorker(idp);
    const verifier = worker;

    const oid = 'bench-user';
    const token = await idp.token({ oid });
    const expectedPrincipal = `${oid}@${idp.tenant}`;

    // The Entra executor must really refuse a call without a token, else we would measure nothing.
    const unauth = await fetch(entra.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    if (unauth.status !== 401)
      throw new Error(`Entra executor answered ${unauth.status} to a request without a token (expected 401)`);

    // Same client library, same token on the wire for both: no-op auth decodes it unverified.
    const entraClient = await connect(entra.mcpUrl, { token });
    const noopClient = await connect(noop.mcpUrl, { token });
    const listOk = (text: string) => {
      const r = JSON.parse(text) as { success?: boolean; count?: number };
      return r.success === true && r.count === 0;
    };

    const subjects = {
      entra: async () => {
        const t0 = performance.now();
        const text = await entraClient.call('demo_list_sessions', { summary_only: true });
        const ms = performance.now() - t0;
        if (!listOk(text)) throw new Error(`entra: unexpected result ${text}`);
        return ms;
      },
      noop: async () => {
        const t0 = performance.now();
        const text = await noopClient.call('demo_list_sessions', { summary_only: true });
        const ms = performance.now() - t0;
        if (!listOk(text)) throw new Error(`noop: unexpected result ${text}`);
        return ms;
      },
      verify: async () => {
        const r = await verifier.verify(token);
        if (r.principal !== expectedPrincipal)
          throw new Error(`verify: principal ${r.principal}, expected ${expectedPrincipal}`);
        return r.ms;
      },
    };
    const names = Object.keys(subjects) as (keyof typeof subjects)[];
    const samples: Record<keyof typeof subjects, number[]> = { entra: [], noop: [], verify: [] };

    note(`warm-up ${WARMUP} rounds, then ${SAMPLES} measured rounds (entra / noop auth / verify only, interleaved)`);
    let jwksAfterWarmup = 0;
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      if (i === WARMUP) {
        jwksAfterWarmup = idp.jwksRequests;
        // One fetch by the Entra executor, one by the verify worker.
        if (jwksAfterWarmup !== 2) note(`warning: ${jwksAfterWarmup} JWKS requests during warm-up (expected 2)`);
      }
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length] as keyof typeof subjects;
        const ms = await subjects[name]();
        if (i >= WARMUP) samples[name].push(ms);
      }
    }
    // The verifier alone with no idle gap between calls (warm thread pool and caches): its floor.
    const hot = await verifier.backToBack(token, SAMPLES);
    if (idp.jwksRequests !== jwksAfterWarmup)
      throw new Error(
        `the JWKS was refetched while measuring (${jwksAfterWarmup} → ${idp.jwksRequests} requests): keys were not cached`,
      );
    note(`JWKS requests: ${idp.jwksRequests} (all during warm-up)`);

    const e = summarize(samples.entra);
    const n = summarize(samples.noop);
    const v = summarize(samples.verify);
    emitFigures(BENCH, 'noop-auth', n);
    emitFigures(BENCH, 'entra', e, { name: 'noop-auth', summary: n });
    const r3 = (x: number) => Number(x.toFixed(3));
    // Added time = difference of the percentiles; `ratio` repeats entra / noop-auth at that percentile.
    emit({
      bench: BENCH,
      subject: 'entra',
      metric: 'p50_added_ms',
      value: r3(e.p50_ms - n.p50_ms),
      n: e.n,
      baseline: 'noop-auth',
      ratio: r3(e.p50_ms / n.p50_ms),
      goal_max: GOAL_ADDED_MS,
    });
    emit({
      bench: BENCH,
      subject: 'entra',
      metric: 'p99_added_ms',
      value: r3(e.p99_ms - n.p99_ms),
      n: e.n,
      baseline: 'noop-auth',
      ratio: r3(e.p99_ms / n.p99_ms),
    });
    emitFigures(BENCH, 'verify-only', v);
    emitFigures(BENCH, 'verify-only-back-to-back', summarize(hot));

    await entraClient.close();
    await noopClient.close();
  } catch (err) {
    for (const ex of executors) note(`executor ${ex.url} logs:\n${ex.logs()}`);
    throw err;
  } finally {
    worker?.stop();
    for (const ex of executors) {
      await ex.stop();
      rmSync(dirname(ex.dataDir), { recursive: true, force: true });
    }
    await idp.close();
  }
}

runBench(BENCH, main);
