import { createWriteStream } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { appError, ErrorKind, InvalidInputError, type Principal } from '@stoa/core';
import { UpstreamCredentials } from '@stoa/connectors';
import type { ArtifactLinks } from '../artifacts/artifact-links';
import type { BlobStore } from '../blob/blob-store';
import { type ObjectPost, peerReadsBinary, postObject } from '../peers/peer-http';
import { checkRelativeName, isInside, type OpenedFile } from '../files/safe-files';
import { validateTargetUrl } from '../peers/target-url';
import type { PeerDestination } from '../transfer.settings';
import type { Publisher, PublishItem, PublishOutcome, PublishRequest } from './publisher';

/** The item a send hands its destination: the public fields, plus the opened (checked) file for built-ins. */
export interface FileItem extends PublishItem {
  readonly file: OpenedFile;
}

/** A kernel variable streamed as its kernel serialises it (to a peer that reads binary bodies). */
export interface StreamItem {
  readonly name: string;
  readonly serializer: string;
  readonly body: AsyncIterable<Buffer>;
}

/** Who sends: the public fields, plus what built-ins need (the caller's token, the peer's target session). */
export interface CallerRequest extends PublishRequest {
  readonly caller: Principal;
  /** Peers: the target session (empty → the peer picks the caller's oldest). */
  readonly targetSession?: string;
  readonly timeoutMs: number;
}

/** A send destination as the executor holds it: every kind, built in or embedded, is a {@link Publisher}. */
export interface Destination {
  readonly kind: 'user' | 'local' | 'blob' | 'peer' | 'custom';
  readonly name: string;
  readonly publisher: Publisher<FileItem, CallerRequest>;
}

/** `to='user'`: a signed, expiring download link to a file in AGORA_OUTPUT_DIR (never a kernel variable). */
export class UserPublisher implements Publisher<FileItem, CallerRequest> {
  readonly name = 'user';
  constructor(private readonly links: ArtifactLinks) {}

  send(item: FileItem, r: CallerRequest): Promise<PublishOutcome> {
    const link = this.links.create(r.sessionId, r.caller.id, checkRelativeName(item.dataRef, 'data_ref'));
    return Promise.resolve({ remote_uri: link.url, expires_at: link.expires_at });
  }
}

/** `to='local'`: copies to `{base}/{session}/{name}`, refusing any name that would land outside that directory. */
export class LocalPublisher implements Publisher<FileItem, CallerRequest> {
  readonly name = 'local';
  constructor(private readonly baseDir: string) {}

  async send(item: FileItem, r: CallerRequest): Promise<PublishOutcome> {
    const name = checkRelativeName(item.name);
    const outside = () =>
      new InvalidInputError(
        `The name '${item.name}' would leave this session's export directory. Give a plain relative name.`,
      );
    const sessionDir = join(await realpath(this.baseDir).catch(() => resolve(this.baseDir)), r.sessionId);
    const dest = resolve(sessionDir, name);
    if (!isInside(dest, sessionDir) || dest === sessionDir) throw outside();
    await mkdir(dirname(dest), { recursive: true, mode: 0o750 });
    if (!isInside(await realpath(dirname(dest)), sessionDir)) throw outside();
    await pipeline(item.stream(), createWriteStream(dest, { mode: 0o640 }));
    return { remote_uri: dest };
  }
}

/** `to='blob'`: uploads to `{session}/{name}` in the configured container. */
export class BlobPublisher implements Publisher<FileItem, CallerRequest> {
  readonly name = 'blob';
  constructor(private readonly store: BlobStore) {}

  async send(item: FileItem, r: CallerRequest): Promise<PublishOutcome> {
    return { remote_uri: await this.store.upload(item.file.handle, `${r.sessionId}/${checkRelativeName(item.name)}`) };
  }
}

/** A peer executor: the serialised object goes to its /object-transfer/receive (the reference's wire format). */
export class PeerPublisher implements Publisher<FileItem, CallerRequest> {
  readonly name: string;
  constructor(
    private readonly peer: PeerDestination,
    private readonly credentials: UpstreamCredentials | undefined,
    /** Negotiate Stoa's binary body with peers that read it (`transfer.peer_binary`). */
    private readonly binary = true,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.name = peer.name;
  }

  async send(item: FileItem, r: CallerRequest): Promise<PublishOutcome> {
    return this.post(item.name, item.serializer, { file: item.file }, r);
  }

  /** Whether this peer reads Stoa's binary body, so an object can stream to it as its kernel serialises it. */
  async readsBinary(timeoutMs: number): Promise<boolean> {
    if (!this.binary) return false;
    return peerReadsBinary(
      validateTargetUrl(this.peer.url, { trustHttp: this.peer.trustHttp, env: this.env }),
      timeoutMs,
    );
  }

  /** Sends an object as it is serialised (only to a peer that {@link readsBinary}). */
  sendStream(item: StreamItem, r: CallerRequest): Promise<PublishOutcome> {
    return this.post(item.name, item.serializer, { stream: item.body }, r);
  }

  private async post(
    name: string,
    serializer: string | undefined,
    source: ObjectPost['source'],
    r: CallerRequest,
  ): Promise<PublishOutcome> {
    const base = validateTargetUrl(this.peer.url, { trustHttp: this.peer.trustHttp, env: this.env });
    const authorization = this.credentials
      ? await this.credentials.authorization(r.caller)
      : r.caller.token
        ? `Bearer ${r.caller.token}`
        : undefined;
    const { status, body } = await postObject({
      base,
      authorization,
      variableName: name,
      sessionId: r.targetSession || undefined,
      metadata: { source_server: r.sourceServer, transfer_id: r.transferId, serializer },
      source,
      timeoutMs: r.timeoutMs,
      binary: 'stream' in source || (this.binary && (await peerReadsBinary(base, r.timeoutMs))),
    });
    if (status < 200 || status >= 300) {
      const why = typeof body.error === 'string' ? body.error : JSON.stringify(body);
      throw new PeerRefusedError(
        `Peer '${this.name}' refused the object (HTTP ${status}): ${why}${typeof body.hint === 'string' ? ` Hint: ${body.hint}` : ''}`,
      );
    }
    return { remote_uri: `Injected '${name}' into ${this.name} kernel (response: ${JSON.stringify(body)})` };
  }

  /** Credentials for a peer with an `auth:` block (connector modes); none → the caller's token is forwarded. */
  static credentials(peer: PeerDestination, ownAudiences: string[]): UpstreamCredentials | undefined {
    if (!peer.auth) return undefined;
    const c = new UpstreamCredentials(peer.name, peer.auth, {
      connector: { mode: ownAudiences.length ? 'entra' : 'noop', audiences: ownAudiences },
    });
    c.assertUsable();
    return c;
  }
}

/** The peer answered the transfer with an error status (its message is passed on). */
export class PeerRefusedError extends appError('PEER_REFUSED', ErrorKind.unavailable) {}

/**
 * An embedding's publisher behind the same interface: it sees only the public fields, frozen, with the bearer token
 * and the opened file left out, and an outcome without a remote_uri is refused with a message for the operator.
 */
export class EmbeddedPublisher implements Publisher<FileItem, CallerRequest> {
  readonly name: string;
  readonly description?: string;
  constructor(private readonly inner: Publisher) {
    this.name = inner.name;
    this.description = inner.description;
  }

  async send(item: FileItem, r: CallerRequest): Promise<PublishOutcome> {
    const out = await this.inner.send(
      Object.freeze({
        kind: item.kind,
        dataRef: item.dataRef,
        name: item.name,
        sizeBytes: item.sizeBytes,
        serializer: item.serializer,
        stream: () => item.stream(),
      }),
      Object.freeze({
        principal: r.principal,
        sessionId: r.sessionId,
        transferId: r.transferId,
        sourceServer: r.sourceServer,
      }),
    );
    if (!out || typeof out.remote_uri !== 'string')
      throw new Error(
        `Publisher '${this.name}' returned no remote_uri; ask the server's operator to fix the publisher.`,
      );
    return {
      remote_uri: out.remote_uri,
      ...(typeof out.expires_at === 'string' ? { expires_at: out.expires_at } : {}),
    };
  }
}
