import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { randomToken } from '@stoa/core';
import { proxyTool, relayProgress, UpstreamPool } from '@stoa/connectors';
import { McpEndpoint, RawToolResult, resultRefs, type ToolContext, type ToolDefinition } from '@stoa/mcp';
import type { GatewaySettings } from './gateway.config';
import { GATEWAY_SETTINGS } from './gateway.tokens';
import { Guardrails } from './guardrails';

/**
 * The gateway's MCP surface (SDK path: discovery, tools/list, 2025-era sessions): the upstream's tools that the
 * policy allows, each call checked, limited and audited as on the fast path.
 */
@Injectable()
export class GatewayMcpService implements OnApplicationShutdown {
  readonly endpoint: McpEndpoint;
  private current: ToolDefinition[] = [];

  constructor(
    @Inject(GATEWAY_SETTINGS) settings: GatewaySettings,
    private readonly pool: UpstreamPool,
    private readonly guard: Guardrails,
  ) {
    const c = settings.config;
    this.rebuild();
    pool.on('changed', () => this.rebuild());
    this.endpoint = new McpEndpoint(
      {
        name: `${c.name}-gateway`,
        version: '0.1.0',
        instructions: c.description || 'Gateway applying policy, rate limits and audit to one code-execution server.',
        tools: () => this.current,
      },
      { mintSessionId: () => `g-${randomToken(24)}`, legacyIdleMs: 30 * 60_000 },
    );
  }

  tools(): readonly ToolDefinition[] {
    return this.current;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.endpoint.close();
  }

  private rebuild(): void {
    const server = this.guard.serverName;
    this.current = this.pool
      .tools()
      .filter(({ tool }) => this.guard.policy.decide(tool.name, server).allowed)
      .map(({ upstream, tool }) =>
        proxyTool(tool, async (args: unknown, ctx: ToolContext) => {
          const body = { params: { name: tool.name, arguments: (args ?? {}) as Record<string, unknown> } };
          const bytesIn = Buffer.byteLength(JSON.stringify(args ?? {}));
          const refusal = await this.guard.before(ctx.principal, tool.name, body, bytesIn);
          if (refusal)
            return new RawToolResult({
              content: [
                {
                  type: 'text',
                  text: JSON.stringify({ success: false, error: refusal.message, ...refusal.extra }, null, 2),
                },
              ],
              isError: true,
            });
          const started = performance.now();
          try {
            const result = await this.pool.call(upstream, ctx.principal, tool.name, body.params.arguments, {
              signal: ctx.signal,
              headers: this.guard.headers,
              onProgress: relayProgress(ctx),
            });
            const bytesOut = Buffer.byteLength(JSON.stringify(result));
            this.guard.after(ctx.principal, tool.name, body, {
              isError: result.isError === true,
              bytesIn,
              bytesOut,
              durationMs: performance.now() - started,
              sessionId: resultRefs(result).session_id,
            });
            return new RawToolResult(result);
          } catch (err) {
            this.guard.after(ctx.principal, tool.name, body, {
              isError: true,
              failed: (err as Error).message,
              bytesIn,
              bytesOut: 0,
              durationMs: performance.now() - started,
            });
            throw err;
          }
        }),
      );
  }
}
