import { Controller, Delete, Get, Injectable, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { InvalidInputError, NotFoundError } from '@stoa/core';
import { SessionService, SessionStatus, type SessionRecord } from '@stoa/sessions';

/** Holds the OpenAPI document generated at start-up (served behind the admin guard). */
@Injectable()
export class OpenApiDocument {
  document: OpenAPIObject | undefined;
}

const STATUSES = Object.values(SessionStatus) as string[];

function view(r: SessionRecord, live: boolean) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    session_id: r.id,
    owner: r.owner,
    status: r.status,
    live,
    replica: r.replica,
    created_at: iso(r.createdAt),
    last_used_at: iso(r.lastUsedAt),
    ended_at: iso(r.endedAt),
    end_reason: r.endReason,
    metadata: r.metadata,
  };
}

/** Operator API (`/admin/v1`): every session of every user. Needs the admin app role. */
@ApiTags('sessions')
@AdminOnly()
@Controller('admin')
export class AdminController {
  constructor(
    private readonly sessions: SessionService,
    private readonly openapi: OpenApiDocument,
  ) {}

  @Get('docs')
  docs(): OpenAPIObject | undefined {
    return this.openapi.document;
  }

  @Get('v1/sessions')
  @ApiQuery({ name: 'owner', required: false, description: 'principal id, e.g. oid@tid' })
  @ApiQuery({ name: 'status', required: false, enum: STATUSES })
  @ApiOkResponse({ description: 'Session records, oldest first' })
  async list(@Query('owner') owner?: string, @Query('status') status?: string) {
    if (status !== undefined && !STATUSES.includes(status))
      throw new InvalidInputError(`Unknown status '${status}'. Use one of: ${STATUSES.join(', ')}.`);
    const records = await this.sessions.listRecords({
      owner: owner || undefined,
      status: status as SessionStatus | undefined,
    });
    return { count: records.length, sessions: records.map((r) => view(r, this.sessions.isLive(r.id))) };
  }

  @Get('v1/sessions/:id')
  async get(@Param('id') id: string) {
    const record = (await this.sessions.listRecords({ id }))[0];
    if (!record) throw new NotFoundError(`Session ${id} not found.`);
    return view(record, this.sessions.isLive(id));
  }

  @Delete('v1/sessions/:id')
  async close(@Param('id') id: string) {
    if (!(await this.sessions.closeAny(id, 'closed by an administrator')))
      throw new NotFoundError(`Session ${id} is not live on this replica.`);
    return { success: true, message: `Session ${id} closed` };
  }
}
