import type { ServerResponse } from 'node:http';
import { All, Controller, Inject, type OnApplicationShutdown, Req, Res } from '@nestjs/common';
import { CurrentPrincipal } from '@stoa/auth';
import { type Principal, randomToken } from '@stoa/core';
import { McpEndpoint, type McpRequest, type McpServerSpec, TASKS_EXTENSION, type ToolDefinition } from '@stoa/mcp';
import { UpstreamPool } from './upstream-pool';

/** How a connector introduces itself to clients, and the prefix of the MCP session ids it mints. */
export interface ConnectorMcpInfo {
  name: string;
  instructions: string;
  sessionPrefix: string;
  /** Resources and skills the connector serves (the router: its upstreams'). */
  resources?: McpServerSpec['resources'];
  skills?: McpServerSpec['skills'];
  /** Prompts and completion/complete the connector serves (its upstreams', declared while one declares them). */
  prompts?: McpServerSpec['prompts'];
  completions?: McpServerSpec['completions'];
  /** Its fast path relays tasks/* (connectorFastPath): declare the Tasks extension while an upstream declares it. */
  relaysTasks?: boolean;
}

/**
 * The MCP surface of a connector (router, gateway, dispatcher) on the SDK path: discovery, tools/list and
 * 2025-era sessions. A subclass says which tools it serves (`build`); they are derived again from the pool on
 * the first request after the pool changed. A connector module provides its subclass as this class too
 * (`{ provide: ConnectorMcpService, useExisting: … }`) for {@link ConnectorMcpController}.
 */
export abstract class ConnectorMcpService implements OnApplicationShutdown {
  readonly endpoint: McpEndpoint;
  private current: ToolDefinition[] | undefined;

  protected constructor(
    protected readonly pool: UpstreamPool,
    info: ConnectorMcpInfo,
  ) {
    pool.on('changed', () => (this.current = undefined));
    this.endpoint = new McpEndpoint(
      {
        name: info.name,
        version: '0.1.0',
        instructions: info.instructions,
        tools: () => this.tools(),
        resources: info.resources,
        skills: info.skills,
        prompts: info.prompts,
        completions: info.completions,
        // Tasks live upstream (the fast path relays tasks/*), so the extension is declared while one declares it.
        extend: info.relaysTasks
          ? (server, era) => {
              if (era === 'modern' && pool.upstreams().some((u) => u.healthy && u.extensions[TASKS_EXTENSION]))
                server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
            }
          : undefined,
      },
      {
        mintSessionId: () => `${info.sessionPrefix}-${randomToken(24)}`,
        legacyIdleMs: 30 * 60_000,
        onToolCall: (tool, isError, s) => pool.metrics?.observeToolCall(tool, isError ? 'error' : 'ok', s),
      },
    );
  }

  /** The tools served now. */
  tools(): readonly ToolDefinition[] {
    return (this.current ??= this.build());
  }

  /** The tools to serve, from the pool as it is now. */
  protected abstract build(): ToolDefinition[];

  async onApplicationShutdown(): Promise<void> {
    await this.endpoint.close();
  }
}

/** `/mcp` of a connector through its SDK endpoint (2026-07-28 upstream tool calls take the fast path first). */
@Controller()
export class ConnectorMcpController {
  constructor(@Inject(ConnectorMcpService) private readonly mcp: ConnectorMcpService) {}

  @All('mcp')
  async handle(
    @Req() req: McpRequest,
    @Res() res: ServerResponse,
    @CurrentPrincipal() principal: Principal,
  ): Promise<void> {
    await this.mcp.endpoint.handle(req, res, principal);
  }
}
