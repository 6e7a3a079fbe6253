import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ActivityPublisher } from '@stoa/activity';
import { isAppError, isPyIdentifier, type Principal } from '@stoa/core';
import { giveToKernel } from '@stoa/kernel';
import { SessionService, type SessionRuntime } from '@stoa/sessions';
import { asSerializer } from '../inputs/code-inputs';
import { kernelDir } from '../files/kernel-files';
import {
  ObjectImportError,
  ReceiveCapacityError,
  ReceiveSessionBusyError,
  ReceiveTargetNotFoundError,
  ReceiveUnauthenticatedError,
  TransferBodyError,
  TransferTooLargeError,
} from './receive.errors';
import { TransferLog } from '../log/transfer-log.service';
import { type ParsedTransferBody, TransferBodyParser } from './transfer-body';
import { capBody, decodeObjectFields, readBinaryBody } from './binary-body';
import { discard, loadStreamed, type PeekedBody, peekBody, replayBody } from './kernel-stream';
import { TRANSFER_SETTINGS, type TransferSettings } from '../transfer.settings';

/** The answer of a successful receipt (reference §6.5). */
export interface ReceivedObject {
  success: true;
  variable_name: string;
  session_id: string;
  size_bytes: number;
  serializer: 'pickle' | 'cloudpickle' | 'dill';
}

const MAX_CONCURRENT_RECEIVES = 4;
const MODULE_HINT =
  "The receiving kernel lacks a module the object was defined in (or the serializer). Send a portable representation instead — plain dicts/lists, numpy arrays, DataFrames, or a file via the user/local/blob destinations — or install the module in this server's environment.";

/** Largest body the endpoint reads: the base64 of the cap plus the JSON around it. */
function maxReceiveBodyBytes(maxObjectBytes: number): number {
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
    @Optional() private readonly activity?: ActivityPublisher,
  ) {}

  private active = 0;

  /** Largest object (and binary body) `receive` takes. */
  get maxObjectBytes(): number {
    return this.settings.config.max_object_bytes;
  }

  /** Largest body `receive` reads; a request that declares more can be refused before its body is read. */
  get maxBodyBytes(): number {
    return maxReceiveBodyBytes(this.settings.config.max_object_bytes);
  }

  /**
   * Reads a body as it streams in (the base64 is decoded straight into a file; at most `maxBodyBytes`; a binary
   * body — see binary-body.ts — is written as it is, at most `max_object_bytes`), then
   * validates and loads it into the target session's kernel. Refusals are AppErrors carrying the reference's
   * messages; only MAX_CONCURRENT_RECEIVES run at once. The temporary file is always removed.
   */
  async receive(
    principal: Principal | undefined,
    body: AsyncIterable<Buffer>,
    binary?: { fieldsHeader: string | string[] | undefined },
  ): Promise<ReceivedObject> {
    // A binary body's fields are in a header: an unreadable one is refused before anything is read or written.
    const binaryFields = binary && decodeObjectFields(binary.fieldsHeader);
    // Each receipt decodes to disk and then occupies a kernel: only a few at once per process.
    if (this.active >= MAX_CONCURRENT_RECEIVES) throw new ReceiveCapacityError();
    this.active++;
    const incoming = join(this.settings.dataDir, 'inbox', '.receiving');
    const file = join(incoming, `recv-${randomBytes(8).toString('hex')}.pkl`);
    try {
      await mkdir(incoming, { recursive: true, mode: 0o700 });
      if (binaryFields) {
        // A binary body is validated from its header and first bytes, then streams into the kernel as it arrives.
        const stream = await peekBody(body);
        const parsed = {
          fields: binaryFields,
          dataIsString: true,
          dataChars: stream.first?.length ?? 0,
          decodedBytes: 0,
        };
        try {
          return await this.accept(principal, parsed, { file, stream });
        } catch (err) {
          // Refused while the sender is still sending: read the rest first, so the sender gets this answer
          // rather than a reset (as a JSON body, which is read whole before anything is checked).
          if (!(err instanceof TransferTooLargeError))
            await discard(stream, this.settings.config.max_object_bytes).catch(() => undefined);
          throw err;
        }
      }
      return await this.accept(principal, await this.read(body, file), { file });
    } finally {
      this.active--;
      await rm(file, { force: true });
    }
  }

  /** The envelope's fields, its `data` decoded into `file`; more than `maxBodyBytes` is refused as it arrives. */
  private async read(body: AsyncIterable<Buffer>, file: string): Promise<ParsedTransferBody> {
    const parser = new TransferBodyParser(file, this.settings.config.max_object_bytes);
    try {
      for await (const chunk of capBody(body, this.maxBodyBytes)) await parser.write(chunk);
      return await parser.end();
    } catch (err) {
      await parser.abort();
      throw err;
    }
  }

  private async accept(
    principal: Principal | undefined,
    parsed: ParsedTransferBody,
    received: Source,
  ): Promise<ReceivedObject> {
    const body = parsed.fields;
    const name = body.variable_name;
    if (typeof name !== 'string' || !parsed.dataIsString)
      throw new TransferBodyError("'variable_name' and 'data' must be strings");
    if (!name || !parsed.dataChars) throw new TransferBodyError("Missing required fields: 'variable_name' and 'data'");
    if (!isPyIdentifier(name)) throw new TransferBodyError(`Invalid Python variable name: '${name}'`);
    if (parsed.base64Error) throw new TransferBodyError(parsed.base64Error);
    const size = { bytes: parsed.decodedBytes };
    if (!principal) throw new ReceiveUnauthenticatedError();
    const meta = (body.metadata && typeof body.metadata === 'object' ? body.metadata : {}) as Record<string, unknown>;
    const source = typeof meta.source_server === 'string' ? meta.source_server : 'unknown';
    const transferId =
      typeof meta.transfer_id === 'string' ? meta.transfer_id.slice(0, 40) : `in-${randomBytes(8).toString('hex')}`;
    // Reference senders pickle with dill and say nothing; the kernel falls back to pickle when dill is absent.
    const serializer = typeof meta.serializer === 'string' ? asSerializer(meta.serializer) : 'dill';
    const sid = typeof body.session_id === 'string' && body.session_id ? body.session_id : undefined;

    const target = this.target(principal, sid);
    const started = performance.now();
    let error: string | null = null;
    try {
      return await this.inject(target, name, received, size, serializer);
    } catch (err) {
      error = isAppError(err) ? err.message : String(err);
      throw err;
    } finally {
      this.log.transfer({
        id: transferId,
        owner: principal.id,
        direction: 'in',
        kind: 'peer',
        peer: source.slice(0, 200),
        sessionId: target.record.id,
        dataRef: name,
        name,
        sizeBytes: size.bytes,
        serializer: error ? null : serializer,
        success: !error,
        error,
        remoteUri: null,
        durationMs: Math.round(performance.now() - started),
      });
      const event = {
        type: 'object_received',
        server: this.settings.serverName,
        transfer_id: transferId,
        variable_name: name,
        source_server: source,
        session_id: target.record.id,
        size_bytes: size.bytes,
        success: !error,
      };
      if (!error) this.logger.log(event, 'object_received');
      else this.logger.warn({ ...event, error }, 'object_received');
      // The reference's event from the receive endpoint (§9.2), to the dashboard when ACTIVITY_UI_URL is set.
      this.activity?.publish({
        type: 'object_received',
        description: `received '${name}' from ${source.slice(0, 200)}${error ? ' failed' : ''}`,
        user: target.record.owner, // the session's owner sees it on the dashboard
        session_id: target.record.id,
        transfer_id: transferId,
        variable_name: name,
        source_server: source.slice(0, 200),
        size_bytes: size.bytes,
        success: !error,
        ...(error ? { error } : {}),
      });
    }
  }

  /** The session to load into: the named one (the caller's), else the caller's oldest live session. */
  private target(principal: Principal, sid: string | undefined): SessionRuntime {
    if (!sid) {
      const oldest = this.sessions.list(principal)[0];
      if (!oldest) throw new ReceiveTargetNotFoundError(undefined);
      return oldest;
    }
    const own = this.sessions.find(principal, sid);
    if (own) return own;
    // The reference answers another user's session with 403, which tells a prober the id is live; here it answers
    // exactly like an unknown id (404), directly and through any connector.
    throw new ReceiveTargetNotFoundError(sid);
  }

  private async inject(
    runtime: SessionRuntime,
    name: string,
    source: Source,
    size: { bytes: number },
    serializer: ReceivedObject['serializer'],
  ): Promise<ReceivedObject> {
    // Never wait behind a running cell: the sender would time out while the object still lands later.
    if (runtime.busyJob || runtime.lock.pending > 0)
      throw new ReceiveSessionBusyError(runtime.record.id, runtime.busyJob);
    const { kernel_timeout_seconds, peer_timeout_seconds, max_object_bytes: maxBytes } = this.settings.config;
    const timeoutMs = kernel_timeout_seconds * 1000;
    let path: string | undefined;
    let rest: Promise<number> | undefined;
    try {
      const r = await runtime.lock.runExclusive(async () => {
        const { kernel } = await this.sessions.kernelFor(runtime);
        if (source.stream) {
          // The load takes as long as the body takes to arrive: its time includes the sender's.
          const target = { name, serializer, timeoutMs: timeoutMs + peer_timeout_seconds * 1000, maxBytes };
          const streamed = await loadStreamed(kernel, runtime.dirs, target, source.stream);
          if (streamed) {
            rest = streamed.body;
            return streamed.load;
          }
          // No socket here (too long a path): the body goes to a file first, as a JSON body's does.
          size.bytes = (await readBinaryBody(replayBody(source.stream), {}, source.file, maxBytes)).decodedBytes;
        }
        path = join(await kernelDir(runtime.dirs, 'in'), `recv-${randomBytes(8).toString('hex')}.pkl`);
        await rename(source.file, path); // same file system: the inbox
        await giveToKernel(path, runtime.dirs);
        return kernel.load(name, path, serializer, timeoutMs);
      });
      // Outside the lock: a streamed body is read to its end (an oversized or broken one is the error to report).
      if (rest) size.bytes = await rest;
      this.sessions.touch(runtime);
      if (!r.ok)
        throw new ObjectImportError(
          `Kernel injection failed: ${r.error}`,
          /ModuleNotFoundError/.test(r.error) ? { hint: MODULE_HINT } : {},
        );
      return { success: true, variable_name: name, session_id: runtime.record.id, size_bytes: size.bytes, serializer };
    } catch (err) {
      if (err instanceof ObjectImportError || err instanceof TransferTooLargeError) throw err;
      throw new ObjectImportError(`Failed to import object: ${(err as Error).message}`, {}, { cause: err });
    } finally {
      if (path) await rm(path, { force: true });
    }
  }
}

/** A received body: decoded into `file` (JSON), or a binary body still streaming (`file` is its fallback). */
interface Source {
  file: string;
  stream?: PeekedBody;
}
