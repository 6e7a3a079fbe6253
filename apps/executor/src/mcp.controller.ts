import { All, Controller, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { McpRequest } from '@stoa/mcp';
import { ExecutorMcpService } from './executor-mcp.service';

/** `/mcp`: Streamable HTTP, both protocol eras. */
@Controller()
export class McpController {
  constructor(private readonly mcp: ExecutorMcpService) {}

  @All('mcp')
  async handle(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    await this.mcp.endpoint.handle(req, res);
  }
}
