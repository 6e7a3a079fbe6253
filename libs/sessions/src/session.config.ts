import { z } from 'zod';
import { boolish, nonNegative, positiveInt } from '@stoa/config';

/** `sessions:` in a server YAML. */
export const sessionConfigSchema = z
  .strictObject({
    max_sessions: positiveInt.default(100).meta({ env: 'STOA_MAX_SESSIONS' }),
    idle_timeout_minutes: nonNegative.default(30),
    /** Kernels started, sandboxed and bootstrapped ahead of demand (new sessions and batch items take them). */
    warm_pool: nonNegative.default(2).meta({ env: 'STOA_WARM_POOL' }),
    /**
     * The pool grows past warm_pool to the most kernels taken within any 5 s of the last 10 minutes, up to this
     * many (each idle pooled kernel costs ~15–30 MB); 0 or ≤ warm_pool keeps a fixed-size pool.
     */
    warm_pool_max: nonNegative.default(16).meta({ env: 'STOA_WARM_POOL_MAX' }),
    /** How often the idle sweep runs. */
    sweep_interval_seconds: positiveInt.default(30),
    /** Key that signs session ids (share it across a dispatcher pool); random per process when unset. */
    id_signing_key: z.string().min(16).optional().meta({ env: 'STOA_SESSION_KEY' }),
    /**
     * Declare execute's execution_session_id as a 2026-07-28 `x-mcp-header`, so clients send it as
     * `Mcp-Param-Execution-Session-Id` and load balancers can route on it. Off by default: the MCP SDK then
     * refuses requests from clients that do not mirror the header.
     */
    session_id_header: boolish.default(false).meta({ env: 'STOA_SESSION_HEADER' }),
    /** This replica's name, carried in session ids; default host:port. */
    replica: z.string().optional().meta({ env: 'STOA_REPLICA' }),
  })
  .prefault({});
export type SessionConfig = z.output<typeof sessionConfigSchema>;
