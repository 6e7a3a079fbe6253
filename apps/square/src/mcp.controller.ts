import { All, Controller, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CurrentPrincipal } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import type { McpRequest } from '@stoa/mcp';
import { SquareMcpService } from './square-mcp.service';

/** `/mcp`: Streamable HTTP, both protocol eras. */
@Controller()
export class McpController {
  constructor(private readonly mcp: SquareMcpService) {}

  @All('mcp')
  async handle(@Req() req: McpRequest, @Res() res: Response, @CurrentPrincipal() principal: Principal): Promise<void> {
    await this.mcp.endpoint.handle(req, res, principal);
  }
}
