import { createHash } from 'node:crypto';
import { Controller, Get, Inject, Injectable } from '@nestjs/common';
import { Public } from '@stoa/auth';
import { listedTools } from '@stoa/mcp';
import { catalogJson } from '@stoa/tools';
import type { ExecutorSettings } from './executor.config';
import { ExecutorMcpService } from './executor-mcp.service';
import { EXECUTOR_SETTINGS } from './executor.tokens';

/** The `/catalog` document and its version (which /health reports so connectors refetch when it changes). */
@Injectable()
export class CatalogDocument {
  readonly body: Record<string, unknown>;
  readonly version: string;

  constructor(@Inject(EXECUTOR_SETTINGS) settings: ExecutorSettings, mcp: ExecutorMcpService) {
    // mcp_tools: the MCP tools with their input schemas, so connectors learn them without an MCP session.
    // mcp_extensions register tools the executor cannot list here: without mcp_tools, connectors ask tools/list.
    const mcpTools = settings.extensions.length ? {} : { mcp_tools: listedTools(mcp.tools) };
    this.body = { ...catalogJson(settings.domain.catalog), ...mcpTools };
    this.version = createHash('sha256').update(JSON.stringify(this.body)).digest('hex').slice(0, 16);
  }
}

/** `GET /catalog`: tools, skills, states and MCP tool schemas as JSON for connectors (public, read-only). */
@Public()
@Controller()
export class CatalogController {
  constructor(private readonly doc: CatalogDocument) {}

  @Get('catalog')
  catalog(): Record<string, unknown> {
    return this.doc.body;
  }
}
