import { Inject, Injectable } from '@nestjs/common';
import {
  ConnectorMcpService,
  proxyTool,
  relayLog,
  relayProgress,
  UpstreamPool,
  UpstreamPrompts,
  UpstreamResources,
} from '@stoa/connectors';
import { RawToolResult, resultRefs, type ToolContext, type ToolDefinition } from '@stoa/mcp';
import type { GatewaySettings } from './gateway.config';
import { GATEWAY_SETTINGS } from './gateway.tokens';
import { Guardrails } from './guardrails.service';
import { policedPrompts } from './prompt-policy';

/**
 * The gateway's MCP surface (SDK path: discovery, tools/list, 2025-era sessions): the upstream's tools that the
 * policy allows, each call checked, limited and audited as on the fast path.
 */
@Injectable()
export class GatewayMcpService extends ConnectorMcpService {
  constructor(
    @Inject(GATEWAY_SETTINGS) settings: GatewaySettings,
    pool: UpstreamPool,
    private readonly guard: Guardrails,
  ) {
    const c = settings.config;
    // The caller's own artifacts, read upstream with the caller's identity; skills only while the policy lets the
    // caller load them as a tool (skills/get must not reach what load_{name}_skill may not).
    const resources = new UpstreamResources(pool);
    const skillsAllowed = () => guard.policy.decide(`load_${guard.serverName}_skill`, guard.serverName).allowed;
    const upstreamPrompts = new UpstreamPrompts(pool);
    const prompts = policedPrompts(
      { prompts: upstreamPrompts, completions: upstreamPrompts.completions },
      (name) => guard.policy.decide(name, guard.serverName).allowed,
    );
    super(pool, {
      name: `${c.name}-gateway`,
      instructions: c.description || 'Gateway applying policy, rate limits and audit to one code-execution server.',
      sessionPrefix: 'g',
      relaysTasks: true,
      resources,
      skills: {
        cache: resources.skills.cache,
        list: async (principal) => (skillsAllowed() ? resources.skills.list(principal) : []),
        get: async (principal, uri) => (skillsAllowed() ? resources.skills.get(principal, uri) : undefined),
      },
      ...prompts,
    });
  }

  protected build(): ToolDefinition[] {
    const server = this.guard.serverName;
    return this.pool
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
              log: relayLog(ctx),
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
