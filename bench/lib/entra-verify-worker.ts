/**
 * Child process for auth-overhead: times `EntraTokenVerifier.verify` alone, one call per IPC request,
 * so the parent can interleave it with its MCP calls. It runs in its own process because the
 * verifier fetches the JWKS over HTTPS from the test issuer, whose CA Node only trusts when
 * NODE_EXTRA_CA_CERTS is set at process start.
 *
 * Start with `node --import tsx bench/lib/entra-verify-worker.ts`, an IPC channel, NODE_EXTRA_CA_CERTS
 * and STOA_BENCH_ENTRA = JSON {tenant_id, client_id, authority}. Protocol (process.send):
 *   child → parent  {type: 'ready'}
 *   parent → child  {id, token}                → child → parent  {id, ms, principal} | {id, error}
 *   parent → child  {id, token, backToBack: n} → child → parent  {id, samples} | {id, error}
 * `ms` is measured in the child around `verify()` only (no IPC). With `backToBack`, the child runs n
 * verifications in a row (no idle gap between them) and returns each one's ms.
 */
import { authConfigSchema, EntraTokenVerifier, entraSettings } from '@stoa/auth';
import { quietNestLogger } from './bench';

export interface VerifyRequest {
  id: number;
  token: string;
  backToBack?: number;
}
export type VerifyReply =
  | { type: 'ready' }
  | { id: number; ms: number; principal: string }
  | { id: number; samples: number[] }
  | { id: number; error: string };

function main(): void {
  if (!process.send) throw new Error('entra-verify-worker needs an IPC channel');
  const raw = process.env.STOA_BENCH_ENTRA;
  if (!raw) throw new Error('STOA_BENCH_ENTRA is not set');
  quietNestLogger();
  const verifier = new EntraTokenVerifier(entraSettings(authConfigSchema.parse(JSON.parse(raw))));
  const send = (m: VerifyReply) => process.send?.(m);
  process.on('message', (m: VerifyRequest) => {
    void (async () => {
      try {
        if (m.backToBack) {
          const samples: number[] = [];
          for (let i = 0; i < m.backToBack; i++) {
            const t0 = performance.now();
            await verifier.verify(m.token);
            samples.push(performance.now() - t0);
          }
          send({ id: m.id, samples });
          return;
        }
        const t0 = performance.now();
        const p = await verifier.verify(m.token);
        const ms = performance.now() - t0;
        send({ id: m.id, ms, principal: p.id });
      } catch (err) {
        send({ id: m.id, error: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
  // Exit with the parent.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

main();
