import type { ServerResponse } from 'node:http';
import { All, Controller, Req, Res } from '@nestjs/common';
import { CurrentPrincipal } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import type { McpRequest } from '@stoa/mcp';
import { RouterMcpService } from './router-mcp.service';

/**
 * `/mcp` through the SDK endpoint: discovery, tools/list, the router's own tools and 2025-era sessions. Upstream
 * tool calls of 2026-07-28 clients never get here — the connector fast path streams them through first.
 */
@Controller()
export class McpController {
  constructor(private readonly mcp: RouterMcpService) {}

  @All('mcp')
  async handle(
    @Req() req: McpRequest,
    @Res() res: ServerResponse,
    @CurrentPrincipal() principal: Principal,
  ): Promise<void> {
    await this.mcp.endpoint.handle(req, res, principal);
  }
}
