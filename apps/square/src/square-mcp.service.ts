import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AuditService } from '@stoa/audit';
import { BoardService, ChatService, LockService, RegistryService, SignalService } from '@stoa/coordination';
import { McpEndpoint, type ToolDefinition } from '@stoa/mcp';
import type { SquareSettings } from './square.config';
import { SQUARE_SETTINGS } from './square.tokens';
import { boardTools } from './tools/board.tools';
import { chatTools } from './tools/chat.tools';
import { lockTools } from './tools/lock.tools';
import { registryTools } from './tools/registry.tools';

/** Binds the square's tools to one MCP endpoint (HTTP both eras, and stdio). */
@Injectable()
export class SquareMcpService implements OnApplicationShutdown {
  readonly endpoint: McpEndpoint;
  readonly tools: readonly ToolDefinition[];

  constructor(
    @Inject(SQUARE_SETTINGS) settings: SquareSettings,
    registry: RegistryService,
    chat: ChatService,
    board: BoardService,
    locks: LockService,
    signals: SignalService,
    audit: AuditService,
  ) {
    const deps = { square: settings.config.name, registry, audit };
    this.tools = [
      ...registryTools(deps, registry),
      ...chatTools(deps, chat),
      ...boardTools(deps, board),
      ...lockTools(deps, locks, signals),
    ];
    this.endpoint = new McpEndpoint(
      {
        name: `${settings.config.name}-square`,
        version: '0.1.0',
        instructions: settings.instructions,
        tools: () => this.tools,
      },
      // An MCP session is only a transport here: agents are registered rows and outlive it.
      { mintSessionId: () => randomUUID(), legacyIdleMs: 30 * 60_000 },
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.endpoint.close();
  }
}
