import { Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { AuditService } from '@stoa/audit';
import { AgentStatus, BoardService, ChatService, LockService, RegistryService } from '@stoa/coordination';
import { InvalidInputError, NotFoundError } from '@stoa/core';

const STATUSES = Object.values(AgentStatus) as string[];

/** Operator API (`/admin/v1/square`): read-only views plus kick and release. Needs the admin app role. */
@ApiTags('square')
@AdminOnly()
@Controller('admin/v1/square')
export class AdminController {
  constructor(
    private readonly registry: RegistryService,
    private readonly chat: ChatService,
    private readonly board: BoardService,
    private readonly locks: LockService,
    private readonly audit: AuditService,
  ) {}

  @Get('agents')
  @ApiQuery({ name: 'status', required: false, enum: STATUSES })
  @ApiOkResponse({ description: 'Every agent with its principal, in registration order' })
  async agents(@Query('status') status?: string) {
    if (status !== undefined && !STATUSES.includes(status))
      throw new InvalidInputError(`Unknown status '${status}'. Use one of: ${STATUSES.join(', ')}.`);
    const agents = (await this.registry.listRecords()).filter((a) => status === undefined || a.status === status);
    return { count: agents.length, agents };
  }

  @Get('agents/:id')
  async agent(@Param('id') id: string) {
    const agent = await this.registry.find(id);
    if (!agent) throw new NotFoundError(`Agent ${id} not found.`);
    return agent;
  }

  @Post('agents/:id/kick')
  @ApiOkResponse({ description: 'The agent is offline now: its locks are released and its departure announced' })
  async kick(@Param('id') id: string) {
    return { success: true, agent: await this.registry.kick(id) };
  }

  @Get('channels')
  @ApiQuery({ name: 'prefix', required: false })
  async channels(@Query('prefix') prefix?: string) {
    return { channels: await this.chat.listChannels(prefix) };
  }

  @Get('waiters')
  @ApiOkResponse({ description: 'chat_await_update calls waiting on this replica, per channel' })
  waiters() {
    return { waiters: this.chat.waiting() };
  }

  @Get('channels/:name/messages')
  @ApiParam({ name: 'name', description: "URL-encoded channel name, e.g. %23general for '#general'" })
  @ApiQuery({ name: 'since', required: false, description: 'ISO time, inclusive' })
  @ApiQuery({ name: 'limit', required: false, description: '0-1000, default 100' })
  @ApiQuery({ name: 'order', required: false, enum: ['asc', 'desc'] })
  async messages(
    @Param('name') name: string,
    @Query('since') since?: string,
    @Query('limit') limit?: string,
    @Query('order') order?: string,
  ) {
    if (order !== undefined && order !== 'asc' && order !== 'desc')
      throw new InvalidInputError("order must be 'asc' or 'desc'.");
    return { messages: await this.chat.read({ channel: name, since, limit: limit ? Number(limit) : 100, order }) };
  }

  @Get('board')
  @ApiQuery({ name: 'prefix', required: false })
  async boardList(@Query('prefix') prefix?: string) {
    return { entries: await this.board.list(prefix ?? '') };
  }

  @Get('board/entry')
  @ApiQuery({ name: 'key', required: true })
  async boardEntry(@Query('key') key?: string) {
    if (!key) throw new InvalidInputError('Pass ?key=<board key>.');
    const entry = await this.board.get(key);
    if (!entry) throw new NotFoundError(`Board key ${key} not found.`);
    return { entry, versions: await this.board.history(key, 20) };
  }

  @Get('locks')
  async lockList() {
    return { locks: await this.locks.list() };
  }

  @Delete('locks')
  @ApiQuery({ name: 'name', required: true })
  @ApiOkResponse({ description: 'Releases a held lock whoever holds it (the next holder gets a higher fencing token)' })
  async release(@Query('name') name?: string) {
    if (!name) throw new InvalidInputError('Pass ?name=<lock name>.');
    if (!(await this.locks.forceRelease(name))) throw new NotFoundError(`Lock ${name} is not held.`);
    return { success: true, released: name };
  }

  @Get('audit')
  @ApiQuery({ name: 'principal', required: false })
  @ApiQuery({ name: 'tool', required: false })
  @ApiQuery({ name: 'agent_id', required: false })
  @ApiQuery({ name: 'limit', required: false, description: '1-1000, default 100' })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiOkResponse({ description: 'One record per tool call (who, tool, agent, outcome, duration), newest first' })
  async auditLog(
    @Query('principal') principal?: string,
    @Query('tool') tool?: string,
    @Query('agent_id') agentId?: string,
    @Query('limit') limit?: string,
    @Query('cursor') cursor?: string,
  ) {
    return this.audit.list({ principal, tool, session_id: agentId, limit: limit ? Number(limit) : 100, cursor });
  }
}
