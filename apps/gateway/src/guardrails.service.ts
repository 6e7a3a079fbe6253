import { Inject, Injectable } from '@nestjs/common';
import { AuditOutcome, AuditService } from '@stoa/audit';
import type { Principal } from '@stoa/core';
import { UpstreamPool, type FastPathHooks, type ForwardOutcome, type RpcBody } from '@stoa/connectors';
import { isExecuteTool } from '@stoa/mcp';
import type { GatewaySettings } from './gateway.config';
import { GATEWAY_SETTINGS } from './gateway.tokens';
import { RateLimits } from './rate-limits.service';
import { ToolPolicy } from './tool-policy';

/** Policy, rate limits and audit around every proxied call, on the fast path and the SDK path alike. */
@Injectable()
export class Guardrails implements FastPathHooks {
  readonly policy: ToolPolicy;
  readonly headers: Record<string, string> | undefined;

  constructor(
    @Inject(GATEWAY_SETTINGS) private readonly settings: GatewaySettings,
    private readonly pool: UpstreamPool,
    private readonly limits: RateLimits,
    private readonly audit: AuditService,
  ) {
    this.policy = new ToolPolicy(settings.config.policy);
    this.headers = this.policy.functionPolicyHeader();
  }

  private get upstream() {
    return this.pool.upstreams()[0]!;
  }

  /** The upstream server's own name (tool families derive from it). */
  get serverName(): string {
    return this.upstream.catalog?.serverName ?? this.upstream.name;
  }

  before = async (
    principal: Principal,
    tool: string,
    body: RpcBody,
    bytesIn: number,
  ): Promise<{ message: string; extra?: Record<string, unknown> } | undefined> => {
    const decision = this.policy.decide(tool, this.serverName);
    if (!decision.allowed) {
      this.record(principal, tool, body, AuditOutcome.denied, decision.rule, {
        bytesIn,
        bytesOut: 0,
        durationMs: 0,
        isError: true,
      });
      return { message: decision.message };
    }
    const limited = await this.limits.consume(principal.id, tool);
    if (limited) {
      this.record(principal, tool, body, AuditOutcome.rateLimited, 'max_calls_per_minute', {
        bytesIn,
        bytesOut: 0,
        durationMs: 0,
        isError: true,
      });
      return { message: limited.message, extra: { retry_after: limited.retry_after } };
    }
    return undefined;
  };

  after = (principal: Principal, tool: string, body: RpcBody, o: ForwardOutcome): void => {
    const outcome = o.failed ? AuditOutcome.upstreamError : o.isError ? AuditOutcome.toolError : AuditOutcome.ok;
    this.record(principal, tool, body, outcome, o.failed ? `allowed (failed: ${o.failed})` : 'allowed', o);
  };

  private record(
    principal: Principal,
    tool: string,
    body: RpcBody,
    outcome: AuditOutcome,
    decision: string,
    o: Omit<ForwardOutcome, 'failed'>,
  ): void {
    const args = body.params?.arguments ?? {};
    const code = isExecuteTool(tool) && typeof args.code === 'string' ? args.code : undefined;
    const explicit =
      typeof args.execution_session_id === 'string'
        ? args.execution_session_id
        : typeof args.session_id === 'string'
          ? args.session_id
          : undefined;
    this.audit.record({
      principal: principal.id,
      tool,
      upstream: this.upstream.name,
      sessionId: explicit ?? o.sessionId ?? null,
      outcome,
      decision,
      durationMs: o.durationMs,
      bytesIn: o.bytesIn,
      bytesOut: o.bytesOut,
      code,
    });
  }
}
