import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isPyIdentifier, type Principal } from '@stoa/core';
import { SessionService, type SessionRuntime } from '@stoa/sessions';
import { asSerializer } from './code-inputs';
import { giveToKernel } from '@stoa/kernel';
import { kernelDir } from './kernel-files';
import { TransferLog } from './transfer-log.service';
import { BodyError, type ParsedTransferBody, TransferBodyParser } from './transfer-body';
import { TRANSFER_SETTINGS, type TransferSettings } from './transfer.settings';

/** An HTTP answer of the receive endpoint (reference §6.5). */
export interface ReceiveAnswer {
  status: number;
  body: Record<string, unknown>;
}

const MAX_CONCURRENT_RECEIVES = 4;
const fail = (status: number, error: string, extra: Record<string, unknown> = {}): ReceiveAnswer => ({ status, body: { success: false, error, ...extra } });

/** Largest body the endpoint reads: the base64 of the cap plus the JSON around it. */
export function maxReceiveBodyBytes(maxObjectBytes: number): number {
  return Math.ceil((maxObjectBytes * 4) / 3) + 4 + 64 * 1024;
}

/**
 * `POST /object-transfer/receive`: validates in the reference's order, then has the target session's kernel
 * load the bytes (pickle/cloudpickle/dill) — nothing is unpickled in the server process.
 */
@Injectable()
export class ReceiveService {
  private readonly logger = new Logger(ReceiveService.name);

  constructor(
    @Inject(TRANSFER_SETTINGS) private readonly settings: TransferSettings,
    private readonly sessions: SessionService,
    private readonly log: TransferLog,
  ) {}

  private active = 0;

  /** A receive slot (release with the returned function), or undefined when MAX_CONCURRENT_RECEIVES are in flight. */
  acquire(): (() => void) | undefined {
    if (this.active >= MAX_CONCURRENT_RECEIVES) return undefined;
    this.active++;
    let released = false;
    return () => {
      if (!released) this.active--;
      released = true;
    };
  }

  get maxBodyBytes(): number {
    return maxReceiveBodyBytes(this.settings.config.max_object_bytes);
  }

  /**
   * Reads a body as it streams in (the base64 is decoded straight into a file; at most `maxBodyBytes`), then
   * validates and loads it into the target session's kernel. The temporary file is always removed.
   */
  async receive(principal: Principal | undefined, body: AsyncIterable<Buffer>): Promise<ReceiveAnswer> {
    const incoming = join(this.settings.dataDir, 'inbox', '.receiving');
    await mkdir(incoming, { recursive: true, mode: 0o700 });
    const file = join(incoming, `recv-${randomBytes(8).toString('hex')}.pkl`);
    const parser = new TransferBodyParser(file, this.settings.config.max_object_bytes);
    try {
      let parsed: ParsedTransferBody;
      try {
        for await (const chunk of body) await parser.write(chunk);
        parsed = await parser.end();
      } catch (err) {
        await parser.abort();
        if (err instanceof BodyError) return fail(err.status, err.message);
        throw err;
      }
      return await this.accept(principal, parsed, file);
    } finally {
      await rm(file, { force: true });
    }
  }

  private async accept(principal: Principal | undefined, parsed: ParsedTransferBody, file: string): Promise<ReceiveAnswer> {
    const body = parsed.fields;
    const name = body.variable_name;
    if (typeof name !== 'string' || !parsed.dataIsString) return fail(400, "'variable_name' and 'data' must be strings");
    if (!name || !parsed.dataChars) return fail(400, "Missing required fields: 'variable_name' and 'data'");
    if (!isPyIdentifier(name)) return fail(400, `Invalid Python variable name: '${name}'`);
    if (parsed.base64Error) return fail(400, parsed.base64Error);
    const size = parsed.decodedBytes;
    if (!principal) return fail(401, 'Authentication required');
    const meta = (body.metadata && typeof body.metadata === 'object' ? body.metadata : {}) as Record<string, unknown>;
    const source = typeof meta.source_server === 'string' ? meta.source_server : 'unknown';
    const transferId = typeof meta.transfer_id === 'string' ? meta.transfer_id.slice(0, 40) : `in-${randomBytes(8).toString('hex')}`;
    // Reference senders pickle with dill and say nothing; the kernel falls back to pickle when dill is absent.
    const serializer = typeof meta.serializer === 'string' ? asSerializer(meta.serializer) : 'dill';
    const sid = typeof body.session_id === 'string' && body.session_id ? body.session_id : undefined;

    const target = this.target(principal, sid);
    if ('status' in target) return target;
    const started = performance.now();
    const answer = await this.inject(target, name, file, size, serializer);
    this.log.transfer({
      id: transferId, owner: principal.id, direction: 'in', kind: 'peer', peer: source.slice(0, 200), sessionId: target.record.id, dataRef: name, name,
      sizeBytes: size, serializer: typeof answer.body.serializer === 'string' ? answer.body.serializer : null, success: answer.status === 200,
      error: answer.status === 200 ? null : String(answer.body.error), remoteUri: null, durationMs: Math.round(performance.now() - started),
    });
    const event = { type: 'object_received', server: this.settings.serverName, transfer_id: transferId, variable_name: name, source_server: source, session_id: target.record.id, size_bytes: size, success: answer.status === 200 };
    if (answer.status === 200) this.logger.log(event, 'object_received');
    else this.logger.warn({ ...event, error: answer.body.error }, 'object_received');
    return answer;
  }

  /** The session to load into: the named one (the caller's), else the caller's oldest live session. */
  private target(principal: Principal, sid: string | undefined): SessionRuntime | ReceiveAnswer {
    if (!sid) return this.sessions.list(principal)[0] ?? fail(404, 'No active session found to receive the object');
    const own = this.sessions.find(principal, sid);
    if (own) return own;
    // The reference answers another user's session with 403 (the issue's contract); unknown ids with 404.
    if (this.sessions.isLive(sid)) return fail(403, 'Not authorized to write to this session');
    return fail(404, `Session '${sid}' not found`);
  }

  private async inject(runtime: SessionRuntime, name: string, received: string, size: number, serializer: 'pickle' | 'cloudpickle' | 'dill'): Promise<ReceiveAnswer> {
    // Never wait behind a running cell: the sender would time out while the object still lands later.
    if (runtime.busyJob || runtime.lock.pending > 0) return fail(409, `Session '${runtime.record.id}' is busy running code${runtime.busyJob ? ` (job ${runtime.busyJob})` : ''}; send again when it has finished.`);
    let path: string | undefined;
    try {
      return await runtime.lock.runExclusive(async () => {
        const { kernel } = await this.sessions.kernelFor(runtime);
        path = join(await kernelDir(runtime.dirs, 'in'), `recv-${randomBytes(8).toString('hex')}.pkl`);
        await rename(received, path); // same file system: the inbox
        await giveToKernel(path, runtime.dirs);
        const r = await kernel.load(name, path, serializer, this.settings.config.kernel_timeout_seconds * 1000);
        this.sessions.touch(runtime);
        if (!r.ok) {
          const hint = /ModuleNotFoundError/.test(r.error)
            ? { hint: 'The receiving kernel lacks a module the object was defined in (or the serializer). Send a portable representation instead — plain dicts/lists, numpy arrays, DataFrames, or a file via the user/local/blob destinations — or install the module in this server\'s environment.' }
            : {};
          return fail(500, `Kernel injection failed: ${r.error}`, hint);
        }
        return { status: 200, body: { success: true, variable_name: name, session_id: runtime.record.id, size_bytes: size, serializer } };
      });
    } catch (err) {
      return fail(500, `Failed to import object: ${(err as Error).message}`);
    } finally {
      if (path) await rm(path, { force: true });
    }
  }
}
