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
import { RawToolResult, type ToolContext, type ToolDefinition } from '@stoa/mcp';
import type { DispatcherSettings } from './dispatcher.config';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';
import { DispatchService } from './dispatch.service';

/**
 * The whole worker surface (execute with execution_session_id, sessions, jobs, batches, send, search, skills,
 * plan), named as the workers name it — the reference exposed only an `execute_code` the workers lack.
 */
@Injectable()
export class DispatcherMcpService extends ConnectorMcpService {
  constructor(
    @Inject(DISPATCHER_SETTINGS) settings: DispatcherSettings,
    pool: UpstreamPool,
    private readonly dispatch: DispatchService,
  ) {
    const c = settings.config;
    // Artifacts live on the worker that holds their session: a read asks the workers in turn (each checks the owner).
    const resources = new UpstreamResources(pool);
    // Identical workers list the same prompts: each once, asked of the first worker that has it.
    const prompts = new UpstreamPrompts(pool);
    super(pool, {
      name: `${c.name}-dispatcher`,
      instructions: c.description || `Code execution dispatched across ${c.workers.length} identical workers.`,
      sessionPrefix: 'd',
      relaysTasks: true,
      resources,
      skills: resources.skills,
      prompts,
      completions: prompts.completions,
    });
  }

  protected build(): ToolDefinition[] {
    // Identical workers: every tool once (the pool routes a name to the first worker listing it).
    return this.pool.tools().map(({ tool }) =>
      proxyTool(
        tool,
        async (args: unknown, ctx: ToolContext) =>
          new RawToolResult(
            await this.dispatch.call(ctx.principal, tool.name, (args ?? {}) as Record<string, unknown>, {
              signal: ctx.signal,
              transportSessionId: ctx.transportSessionId,
              onProgress: relayProgress(ctx),
              log: relayLog(ctx),
            }),
          ),
      ),
    );
  }
}
