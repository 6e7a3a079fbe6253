import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isAppError, isPyIdentifier, tokenlessPrincipal, type Principal } from '@stoa/core';
import { SessionService, type SessionRuntime } from '@stoa/sessions';
import type { ArtifactLinks } from '../artifacts/artifact-links';
import { type CallerRequest, type Destination, PeerPublisher } from './destinations';
import { streamVariable } from './object-stream';
import { checkRelativeName, openKernelFile, type OpenedFile, unlinkKernelFile } from '../files/safe-files';
import { TransferLog } from '../log/transfer-log.service';
import { TRANSFER_SETTINGS, type TransferSettings } from '../transfer.settings';
import { TransferRuntime } from '../transfer.runtime';

export interface SendInput {
  data_ref: string;
  to: string;
  name?: string | null;
  path?: string | null;
  session_id?: string | null;
  execution_session_id?: string | null;
}

export type SendResult =
  | {
      success: true;
      data_ref: string;
      destination: string;
      name: string;
      remote_uri: string;
      transfer_id: string;
      size_bytes: number;
      serializer?: string;
      expires_at?: string;
    }
  | { success: false; error: string; transfer_id?: string };

class SendError extends Error {}

/** `{name}_send` (reference §6.3): routes a kernel variable or an output file to user, local, blob or a peer. */
@Injectable()
export class SendService {
  private readonly logger = new Logger(SendService.name);

  constructor(
    @Inject(TRANSFER_SETTINGS) private readonly settings: TransferSettings,
    private readonly runtime: TransferRuntime,
    private readonly sessions: SessionService,
    private readonly log: TransferLog,
  ) {}

  get links(): ArtifactLinks {
    return this.runtime.links;
  }

  /** Destination names in the reference's order: registered publishers first, then registry peers. */
  destinationNames(): string[] {
    return this.runtime.destinations.map((d) => d.name);
  }

  /** The kinds of destination configured (decides which `{name}_send` parameters apply). */
  destinationKinds(): Set<Destination['kind']> {
    return new Set(this.runtime.destinations.map((d) => d.kind));
  }

  /** The embedding's own destinations, for the tool description. */
  customDestinations(): { name: string; description?: string }[] {
    return this.runtime.destinations.flatMap((d) =>
      d.kind === 'custom' ? [{ name: d.name, description: d.publisher.description }] : [],
    );
  }

  async send(principal: Principal, input: SendInput, transportSessionId?: string): Promise<SendResult> {
    const transferId = randomUUID().replace(/-/g, '');
    const dest = this.runtime.destinations.find((d) => d.name === input.to);
    if (!dest)
      return {
        success: false,
        error: `Unknown destination '${input.to}'. Available destinations: [${this.destinationNames()
          .map((n) => `'${n}'`)
          .join(', ')}]`,
      };
    const started = performance.now();
    const dataRef = String(input.data_ref ?? '');
    const name = input.name || dataRef;
    const logical = input.path || name;
    let runtime: SessionRuntime | undefined;
    let sent: { remote: string; size: number; serializer?: string; expires_at?: string } | undefined;
    let error: string | undefined;
    try {
      runtime = await this.senderSession(principal, input.execution_session_id, transportSessionId);
      if (dest.kind === 'peer') {
        if (!isPyIdentifier(dataRef))
          throw new SendError(
            `Server destination '${input.to}' requires a valid Python variable name as data_ref, but got '${dataRef}'. Use a kernel variable name.`,
          );
        if (!isPyIdentifier(name))
          throw new SendError(`Invalid target variable name: '${name}'. Must be a valid Python identifier.`);
      }
      sent = await this.materialiseAndPublish(
        principal,
        runtime,
        dest,
        dataRef,
        dest.kind === 'peer' ? name : logical,
        input.session_id ?? undefined,
        transferId,
      );
    } catch (err) {
      error =
        err instanceof SendError || isAppError(err) ? err.message : `${(err as Error).name}: ${(err as Error).message}`;
    }
    this.log.transfer({
      id: transferId,
      owner: principal.id,
      direction: 'out',
      kind: dest.kind,
      peer: dest.name,
      sessionId: runtime?.record.id ?? null,
      dataRef,
      name: dest.kind === 'peer' ? name : logical,
      sizeBytes: sent?.size ?? null,
      serializer: sent?.serializer ?? null,
      success: !error,
      error: error ?? null,
      remoteUri: sent ? (dest.kind === 'user' ? withoutToken(sent.remote) : sent.remote) : null,
      durationMs: Math.round(performance.now() - started),
    });
    // The reference's activity events (§9.2), as structured log lines; the admin API has the same records.
    const type = dest.kind === 'peer' ? 'object_sent' : 'artifact_published';
    const event = {
      type,
      server: this.settings.serverName,
      transfer_id: transferId,
      data_ref: dataRef,
      destination: dest.name,
      name,
      session_id: runtime?.record.id,
      success: !error,
      size_bytes: sent?.size,
    };
    if (error || !sent) {
      this.logger.warn({ ...event, error }, type);
      return { success: false, error: error ?? 'send failed', transfer_id: transferId };
    }
    this.logger.log(event, type);
    return {
      success: true,
      data_ref: dataRef,
      destination: dest.name,
      name: dest.kind === 'peer' ? name : logical,
      remote_uri: sent.remote,
      transfer_id: transferId,
      size_bytes: sent.size,
      ...(sent.serializer ? { serializer: sent.serializer } : {}),
      ...(sent.expires_at ? { expires_at: sent.expires_at } : {}),
    };
  }

  /** The sender's session: explicit id, the MCP connection's, else the caller's most recently used one. */
  private async senderSession(
    principal: Principal,
    explicit: string | null | undefined,
    transport: string | undefined,
  ): Promise<SessionRuntime> {
    if (explicit) return this.sessions.get(principal, explicit);
    const viaTransport = transport ? this.sessions.find(principal, transport) : undefined;
    if (viaTransport) return viaTransport;
    const latest = this.sessions.list(principal).sort((a, b) => b.record.lastUsedAt - a.record.lastUsedAt)[0];
    if (latest) return latest;
    throw new SendError(
      `Session error: you have no active session to send from. Run execute_${this.settings.serverName}_code first and pass its session_id as execution_session_id.`,
    );
  }

  private async materialiseAndPublish(
    principal: Principal,
    runtime: SessionRuntime,
    dest: Destination,
    dataRef: string,
    name: string,
    targetSession: string | undefined,
    transferId: string,
  ) {
    if (runtime.busyJob)
      throw new SendError(
        `Session busy — job ${runtime.busyJob} is still running. Wait for it (check_job) and send again.`,
      );
    const timeoutMs = this.settings.config.kernel_timeout_seconds * 1000;
    const request: CallerRequest = {
      principal: tokenlessPrincipal(principal),
      caller: principal,
      sessionId: runtime.record.id,
      transferId,
      sourceServer: this.settings.serverName,
      targetSession,
      timeoutMs: this.settings.config.peer_timeout_seconds * 1000,
    };
    // A Stoa peer takes the object as the kernel serialises it: no file is written and read back.
    // (A target session id too long for the fields header goes as JSON, from a file.)
    const peer = dest.publisher instanceof PeerPublisher ? dest.publisher : undefined;
    if (peer && (targetSession ?? '').length <= 4096 && (await peer.readsBinary(request.timeoutMs))) {
      const streamed = await runtime.lock.runExclusive(async () => {
        const { kernel } = await this.sessions.kernelFor(runtime);
        const maxBytes = this.settings.config.max_object_bytes;
        // The kernel serialises as fast as the peer takes the bytes: its time includes the upload.
        const limits = { timeoutMs: timeoutMs + request.timeoutMs, maxBytes };
        return streamVariable(kernel, runtime.dirs, dataRef, limits, (serializer, body) =>
          peer.sendStream({ name, serializer, body }, request),
        );
      });
      const d = streamed?.dump;
      if (d?.tooLarge) throw new SendError(tooLarge(d.sizeBytes ?? 0, this.settings.config.max_object_bytes));
      if (d?.error !== undefined)
        throw new SendError(`Failed to serialize variable '${dataRef}' from kernel: ${d.error}`);
      if (d?.found && streamed?.result)
        return { remote: streamed.result.remote_uri, size: d.sizeBytes ?? 0, serializer: d.serializer };
      // Not a variable (an output file may have that name), or no socket here: the file path below.
    }
    let pickled: { dir: string; file: string; serializer: string } | undefined;
    let file: OpenedFile | undefined;
    try {
      // A variable is serialised by the kernel itself (never unpickled here); else data_ref names an output file.
      if (isPyIdentifier(dataRef) && dest.kind !== 'user') {
        pickled = await runtime.lock.runExclusive(async () => {
          const { kernel } = await this.sessions.kernelFor(runtime);
          // The kernel writes into its own transfer dir; the host only reads it back through openInside.
          const dir = runtime.dirs.transferDir;
          const file = `out-${transferId}.pkl`;
          const r = await kernel.dump(dataRef, join(dir, file), timeoutMs);
          if (r.error) throw new SendError(`Failed to serialize variable '${dataRef}' from kernel: ${r.error}`);
          return r.found ? { dir, file, serializer: r.serializer ?? 'pickle' } : undefined;
        });
      }
      if (pickled) file = await openKernelFile(runtime.dirs, join(pickled.dir, pickled.file)).catch(() => undefined);
      file ??= await this.outputFile(runtime, dataRef);
      if (!file && dest.kind === 'user' && isPyIdentifier(dataRef)) {
        throw new SendError(
          `Cannot send '${dataRef}' to 'user': artifact must be a file in AGORA_OUTPUT_DIR (not a kernel variable) for GUI download.`,
        );
      }
      if (!file) {
        throw new SendError(
          isPyIdentifier(dataRef)
            ? `Cannot resolve '${dataRef}': not found as a kernel variable or as a file in AGORA_OUTPUT_DIR. Create the variable or write the file with agora_output('${dataRef}') first.`
            : `Cannot resolve '${dataRef}': not a valid Python identifier and not found in AGORA_OUTPUT_DIR. Pass a kernel variable name, or the name of a file listed in a result's artifacts.`,
        );
      }
      const max = this.settings.config.max_object_bytes;
      if (dest.kind === 'peer' && file.size > max) {
        throw new SendError(tooLarge(file.size, max));
      }
      const opened = file;
      const serializer = pickled?.serializer;
      const out = await dest.publisher.send(
        {
          kind: serializer ? 'object' : 'file',
          dataRef,
          name,
          sizeBytes: opened.size,
          serializer,
          file: opened,
          stream: () => opened.handle.createReadStream({ start: 0, autoClose: false }),
        },
        request,
      );
      return { remote: out.remote_uri, size: opened.size, serializer, expires_at: out.expires_at };
    } finally {
      await file?.handle.close();
      if (pickled) await unlinkKernelFile(runtime.dirs, join(pickled.dir, pickled.file));
    }
  }

  /** A file in the session's AGORA_OUTPUT_DIR named by a relative path, opened safely; undefined when absent. */
  private async outputFile(runtime: SessionRuntime, ref: string): Promise<OpenedFile | undefined> {
    let rel: string;
    try {
      rel = checkRelativeName(ref, 'data_ref');
    } catch {
      return undefined;
    }
    return openKernelFile(runtime.dirs, join(runtime.outputDir, rel)).catch(() => undefined);
  }
}

function tooLarge(size: number, max: number): string {
  return `Serialized object size (${size.toLocaleString('en-US')} bytes) exceeds limit (${max.toLocaleString('en-US')} bytes). Reduce the object size or split into smaller pieces.`;
}

/** A download link as the admin log keeps it: the capability token is not stored. */
function withoutToken(url: string): string {
  return url.replace(/\/artifacts\/([^/]+)\/[^/]+\//, '/artifacts/$1/[token]/');
}
