import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { randomToken } from '@stoa/core';
import { proxyTool, relayProgress, UpstreamPool } from '@stoa/connectors';
import { McpEndpoint, RawToolResult, type ToolContext, type ToolDefinition } from '@stoa/mcp';
import type { DispatcherSettings } from './dispatcher.config';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';
import { DispatchService } from './dispatch.service';

/**
 * The whole worker surface (execute with execution_session_id, sessions, jobs, batches, send, search, skills,
 * plan), named as the workers name it — the reference exposed only an `execute_code` the workers lack.
 */
@Injectable()
export class DispatcherMcpService implements OnApplicationShutdown {
  readonly endpoint: McpEndpoint;
  private current: ToolDefinition[] = [];

  constructor(
    @Inject(DISPATCHER_SETTINGS) settings: DispatcherSettings,
    private readonly pool: UpstreamPool,
    private readonly dispatch: DispatchService,
  ) {
    const c = settings.config;
    this.rebuild();
    pool.on('changed', () => this.rebuild());
    this.endpoint = new McpEndpoint(
      {
        name: `${c.name}-dispatcher`,
        version: '0.1.0',
        instructions: c.description || `Code execution dispatched across ${c.workers.length} identical workers.`,
        tools: () => this.current,
      },
      { mintSessionId: () => `d-${randomToken(24)}`, legacyIdleMs: 30 * 60_000 },
    );
  }

  tools(): readonly ToolDefinition[] {
    return this.current;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.endpoint.close();
  }

  private rebuild(): void {
    // Identical workers: every tool once (the pool routes a name to the first worker listing it).
    this.current = this.pool.tools().map(({ tool }) =>
      proxyTool(
        tool,
        async (args: unknown, ctx: ToolContext) =>
          new RawToolResult(
            await this.dispatch.call(ctx.principal, tool.name, (args ?? {}) as Record<string, unknown>, {
              signal: ctx.signal,
              transportSessionId: ctx.transportSessionId,
              onProgress: relayProgress(ctx),
            }),
          ),
      ),
    );
  }
}
