import { Inject, Injectable, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { ActivityPublisher, StoaMetrics } from '@stoa/activity';
import { CatalogService, catalogTools } from '@stoa/catalog';
import { BatchRunner, ExecutionService } from '@stoa/execution';
import { JobService } from '@stoa/jobs';
import { combinedResources, McpEndpoint, type ToolDefinition } from '@stoa/mcp';
import { SessionService } from '@stoa/sessions';
import { EXECUTOR_SETTINGS } from './executor.tokens';
import type { ExecutorSettings } from './executor.config';
import { SkillResources, TOOL_SEARCH_BACKEND, toolCatalogueText, type ToolSearchBackend } from '@stoa/tools';
import { domainTools } from './tools/domain.tools';
import { KernelService } from '@stoa/kernel';
import { executeTool } from './tools/execute.tool';
import { jobTools } from './tools/job.tools';
import { JobTasks } from './tasks.backend';
import { sessionTools } from './tools/session.tools';
import { withActivityEvents } from './tools/activity-events';
import { ArtifactResources, SendService, sendTool, TransferRuntime, withAssetArguments } from '@stoa/transfer';

/** Binds the executor's tools to the MCP endpoint. */
@Injectable()
export class ExecutorMcpService implements OnApplicationShutdown {
  readonly endpoint: McpEndpoint;
  readonly tools: readonly ToolDefinition[];

  constructor(
    @Inject(EXECUTOR_SETTINGS) settings: ExecutorSettings,
    sessions: SessionService,
    execution: ExecutionService,
    batches: BatchRunner,
    jobs: JobService,
    tasks: JobTasks,
    kernels: KernelService,
    send: SendService,
    transfer: TransferRuntime,
    @Optional() dataCatalog?: CatalogService,
    @Optional() activity?: ActivityPublisher,
    @Optional() metrics?: StoaMetrics,
    @Optional() @Inject(TOOL_SEARCH_BACKEND) toolSearch?: ToolSearchBackend,
  ) {
    const { config } = settings;
    const catalog = settings.domain.catalog;
    const tools = [
      executeTool(
        {
          name: config.name,
          description: config.description,
          defaultTimeout: config.execution.default_timeout,
          maxTimeout: config.execution.max_timeout,
          catalogue: toolCatalogueText(catalog.tools),
          disallowed: kernels.screenGuidance,
          sessionHeader: config.sessions.session_id_header,
        },
        execution,
        jobs,
        tasks,
      ),
      ...domainTools(config.name, catalog, config.search, toolSearch),
      ...sessionTools(config.name, sessions, execution),
      ...jobTools(config.name, jobs, sessions, execution, batches, {
        maxTimeout: config.execution.max_timeout,
        maxInputs: config.execution.parallel_max_inputs,
      }),
      sendTool(config.name, send, config.transfer.link_ttl_seconds),
      ...(dataCatalog ? catalogTools(dataCatalog, { executeTool: `execute_${config.name}_code` }) : []),
    ];
    const withAssets = config.transfer.assets.resolve_tool_arguments
      ? withAssetArguments(tools, transfer.assets, sessions)
      : tools;
    this.tools = withActivityEvents(withAssets, config.name, activity);
    const skills = new SkillResources(config.name, catalog.skills);
    const artifacts = new ArtifactResources(config.name, sessions);
    this.endpoint = new McpEndpoint(
      {
        name: `${config.name}-executor`,
        version: '0.1.0',
        instructions: config.description || undefined,
        tools: () => this.tools,
        tasks,
        resources: combinedResources([
          skills.resources,
          artifacts,
          ...settings.extensions.flatMap((e) => (e.resources ? [e.resources] : [])),
        ]),
        skills,
        resultLinks: (value) => artifacts.links(value),
        extend: settings.extensions.length
          ? (server, era, kit) => settings.extensions.forEach((e) => e.register(server, era, kit))
          : undefined,
      },
      {
        mintSessionId: () => sessions.ids.mint(),
        // Ending the MCP transport (DELETE, disconnect, idle) never ends the execution session: the kernel stays
        // until {name}_close_session, idle expiry or shutdown, so a new connection resumes it by execution_session_id.
        legacyIdleMs: Math.max(60_000, config.sessions.idle_timeout_minutes * 60_000),
        onToolCall: metrics && ((tool, isError, s) => metrics.observeToolCall(tool, isError ? 'error' : 'ok', s)),
      },
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.endpoint.close();
  }
}
