import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { InvalidInputError } from '@stoa/core';
import { TransferLog } from '@stoa/transfer';

const iso = (ms: number) => new Date(ms).toISOString();

/** The query's limit (default 100); TransferLog refuses anything but an integer in 1–1000. */
function limitOf(raw: string | undefined): number {
  return raw === undefined ? 100 : Number(raw);
}

/** Operator API: files written to output directories and data sent or received, newest first. */
@ApiTags('transfers')
@AdminOnly()
@Controller('admin/v1')
export class AdminTransfersController {
  constructor(private readonly log: TransferLog) {}

  @Get('artifacts')
  @ApiQuery({ name: 'owner', required: false, description: 'principal id, e.g. oid@tid' })
  @ApiQuery({ name: 'session_id', required: false })
  @ApiQuery({ name: 'limit', required: false, description: '1–1000, default 100' })
  @ApiOkResponse({ description: 'Artifact records (files written to AGORA_OUTPUT_DIR), newest first' })
  async artifacts(
    @Query('owner') owner?: string,
    @Query('session_id') sessionId?: string,
    @Query('limit') limit?: string,
  ) {
    const rows = await this.log.listArtifacts({
      owner: owner || undefined,
      session_id: sessionId || undefined,
      limit: limitOf(limit),
    });
    return {
      count: rows.length,
      artifacts: rows.map((r) => ({
        id: r.id,
        at: iso(r.at),
        owner: r.owner,
        session_id: r.sessionId,
        name: r.name,
        size_bytes: r.sizeBytes,
        mime_type: r.mimeType,
      })),
    };
  }

  @Get('transfers')
  @ApiQuery({ name: 'owner', required: false })
  @ApiQuery({ name: 'session_id', required: false })
  @ApiQuery({ name: 'direction', required: false, enum: ['out', 'in'] })
  @ApiQuery({ name: 'limit', required: false, description: '1–1000, default 100' })
  @ApiOkResponse({ description: 'Sends (out) and object receipts (in), newest first' })
  async transfers(
    @Query('owner') owner?: string,
    @Query('session_id') sessionId?: string,
    @Query('direction') direction?: string,
    @Query('limit') limit?: string,
  ) {
    if (direction !== undefined && direction !== 'in' && direction !== 'out')
      throw new InvalidInputError(`direction must be 'in' or 'out', got '${direction}'.`);
    const rows = await this.log.listTransfers({
      owner: owner || undefined,
      session_id: sessionId || undefined,
      direction,
      limit: limitOf(limit),
    });
    return {
      count: rows.length,
      transfers: rows.map((r) => ({
        transfer_id: r.id,
        at: iso(r.at),
        owner: r.owner,
        direction: r.direction,
        kind: r.kind,
        peer: r.peer,
        session_id: r.sessionId,
        data_ref: r.dataRef,
        name: r.name,
        size_bytes: r.sizeBytes,
        serializer: r.serializer,
        success: r.success,
        error: r.error,
        remote_uri: r.remoteUri,
        duration_ms: r.durationMs,
      })),
    };
  }
}
