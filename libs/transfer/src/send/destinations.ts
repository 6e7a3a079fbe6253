import { createWriteStream } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { appError, ErrorKind, InvalidInputError, type Principal } from '@stoa/core';
import { UpstreamCredentials } from '@stoa/connectors';
import type { BlobStore } from '../blob/blob-store';
import { postObject } from '../peers/peer-http';
import { checkRelativeName, isInside, type OpenedFile } from '../files/safe-files';
import { validateTargetUrl } from '../peers/target-url';
import type { PeerDestination } from '../transfer.settings';

/** Where a send goes. */
export type Destination =
  | { kind: 'user'; name: 'user' }
  | { kind: 'local'; name: 'local'; baseDir: string }
  | { kind: 'blob'; name: 'blob'; store: BlobStore }
  | { kind: 'peer'; name: string; peer: PeerDestination; credentials?: UpstreamCredentials };

export interface PublishInput {
  principal: Principal;
  sessionId: string;
  file: OpenedFile;
  /** Logical name (file destinations) or target variable (peers). */
  name: string;
  /** Peers: the target session (empty → the peer picks the caller's oldest). */
  targetSession?: string;
  transferId: string;
  serializer?: string;
  sourceServer: string;
  timeoutMs: number;
}

/** Copies to `{base}/{session}/{name}`, refusing any name that would land outside the session's directory. */
export async function publishLocal(d: Extract<Destination, { kind: 'local' }>, p: PublishInput): Promise<string> {
  const name = checkRelativeName(p.name);
  const sessionDir = join(await realpath(d.baseDir).catch(() => resolve(d.baseDir)), p.sessionId);
  const dest = resolve(sessionDir, name);
  if (!isInside(dest, sessionDir) || dest === sessionDir)
    throw new InvalidInputError(
      `The name '${p.name}' would leave this session's export directory. Give a plain relative name.`,
    );
  await mkdir(dirname(dest), { recursive: true, mode: 0o750 });
  const real = await realpath(dirname(dest));
  if (!isInside(real, sessionDir))
    throw new InvalidInputError(
      `The name '${p.name}' would leave this session's export directory. Give a plain relative name.`,
    );
  await pipeline(
    p.file.handle.createReadStream({ start: 0, autoClose: false }),
    createWriteStream(dest, { mode: 0o640 }),
  );
  return dest;
}

/** Uploads to blob `{session}/{name}` in the configured container. */
export async function publishBlob(d: Extract<Destination, { kind: 'blob' }>, p: PublishInput): Promise<string> {
  const name = checkRelativeName(p.name);
  return d.store.upload(p.file.handle, `${p.sessionId}/${name}`);
}

/** Sends a serialised object to a peer executor's /object-transfer/receive. */
export async function publishPeer(
  d: Extract<Destination, { kind: 'peer' }>,
  p: PublishInput,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const base = validateTargetUrl(d.peer.url, { trustHttp: d.peer.trustHttp, env });
  const authorization = d.credentials
    ? await d.credentials.authorization(p.principal)
    : p.principal.token
      ? `Bearer ${p.principal.token}`
      : undefined;
  const { status, body } = await postObject({
    base,
    authorization,
    variableName: p.name,
    sessionId: p.targetSession || undefined,
    metadata: { source_server: p.sourceServer, transfer_id: p.transferId, serializer: p.serializer },
    file: p.file,
    timeoutMs: p.timeoutMs,
  });
  if (status < 200 || status >= 300) {
    const why = typeof body.error === 'string' ? body.error : JSON.stringify(body);
    throw new PeerRefusedError(
      `Peer '${d.name}' refused the object (HTTP ${status}): ${why}${typeof body.hint === 'string' ? ` Hint: ${body.hint}` : ''}`,
    );
  }
  return `Injected '${p.name}' into ${d.name} kernel (response: ${JSON.stringify(body)})`;
}

/** The peer answered the transfer with an error status (its message is passed on). */
export class PeerRefusedError extends appError('PEER_REFUSED', ErrorKind.unavailable) {}

/** Credentials for a peer with an `auth:` block (connector modes); none → the caller's token is forwarded. */
export function peerCredentials(peer: PeerDestination, ownAudiences: string[]): UpstreamCredentials | undefined {
  if (!peer.auth) return undefined;
  const c = new UpstreamCredentials(peer.name, peer.auth, {
    connector: { mode: ownAudiences.length ? 'entra' : 'noop', audiences: ownAudiences },
  });
  c.assertUsable();
  return c;
}
