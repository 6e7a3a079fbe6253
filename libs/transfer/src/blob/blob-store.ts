import { randomBytes } from 'node:crypto';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DefaultAzureCredential, type TokenCredential } from '@azure/identity';
import { BlobServiceClient, RestError, type BlobClient } from '@azure/storage-blob';
import { z } from 'zod';
import { ConfigError, positiveInt } from '@stoa/config';
import { mimeOf } from '../artifacts/artifacts';
import { type BlobUri, parseBlobUri, sanitize, URI_FORMS } from './blob-uri';
import { appError, AppError, ErrorKind, InvalidInputError, NotFoundError, UnavailableError } from '@stoa/core';

const MiB = 1024 * 1024;
/** Download/upload tuning (reference §2.8: MCP_BLOB_MAX_CONCURRENCY, MCP_BLOB_CHUNK_SIZE, MCP_BLOB_MAX_SINGLE_GET). */
export const blobTuningSchema = z.strictObject({
  /** Parallel range requests (and block uploads) per transfer. */
  max_concurrency: positiveInt.default(4).meta({ env: 'MCP_BLOB_MAX_CONCURRENCY' }),
  /** Bytes per range request / uploaded block. */
  chunk_size: positiveInt.default(64 * MiB).meta({ env: 'MCP_BLOB_CHUNK_SIZE' }),
  /** Blobs up to this size are fetched with one GET. */
  max_single_get: positiveInt.default(64 * MiB).meta({ env: 'MCP_BLOB_MAX_SINGLE_GET' }),
});
export type BlobTuning = z.output<typeof blobTuningSchema>;

/** One storage account: a connection string (wins) or an account URL reached with DefaultAzureCredential. */
export interface BlobStoreConfig extends Partial<BlobTuning> {
  connection_string?: string;
  account_url?: string;
  /** Default container for uploads. */
  container?: string;
}

/** Storage refused our credentials, no token could be had, or the blob lives in an account we hold no credentials for. */
export class BlobAccessError extends appError('BLOB_ACCESS_DENIED', ErrorKind.forbidden) {}

/** Uploads files to and downloads blobs from one Azure Storage account (or Azurite). */
export class BlobStore {
  private readonly logger = new Logger(BlobStore.name);
  private readonly service: BlobServiceClient;
  private readonly tuning: BlobTuning;
  private readonly accountUrl: string;
  private closed = false;

  constructor(
    private readonly config: BlobStoreConfig,
    credential?: TokenCredential,
  ) {
    if (config.connection_string) this.service = BlobServiceClient.fromConnectionString(config.connection_string);
    else if (config.account_url)
      this.service = new BlobServiceClient(config.account_url, credential ?? new DefaultAzureCredential());
    else
      throw new ConfigError('blob storage', [
        'set connection_string, or account_url (managed identity / DefaultAzureCredential)',
      ]);
    // Only the tuning keys: the rest of the block (credentials, container) belongs to its own, strict schema.
    const tuning = blobTuningSchema.safeParse({
      max_concurrency: config.max_concurrency,
      chunk_size: config.chunk_size,
      max_single_get: config.max_single_get,
    });
    if (!tuning.success)
      throw new ConfigError(
        'blob storage',
        tuning.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
      );
    this.tuning = tuning.data;
    this.accountUrl = this.service.url.replace(/\/+$/, '');
  }

  /** The storage account this store holds credentials for. */
  get account(): string {
    return this.service.accountName || new URL(this.accountUrl).host;
  }

  /** True for URIs in one of the supported blob forms (of any account; download refuses other accounts). */
  /** Account, container and path of `uri` as this store reads it (its own account URL form included). */
  where(uri: string): BlobUri | undefined {
    try {
      return parseBlobUri(uri, this.accountUrl);
    } catch {
      return undefined;
    }
  }

  /** True when `uri` names a blob in this store's own account (the one it holds credentials for). */
  owns(uri: string): boolean {
    try {
      return parseBlobUri(uri, this.accountUrl)?.account === this.account;
    } catch {
      return false;
    }
  }

  canHandle(uri: string): boolean {
    try {
      return parseBlobUri(uri, this.accountUrl) !== undefined;
    } catch {
      return true; // ours, but malformed: download() says what is wrong
    }
  }

  /** Uploads (overwriting) a local file as `blobName`; returns the blob's URL. */
  async upload(
    source: string | FileHandle,
    blobName: string,
    container = this.config.container,
    options: { signal?: AbortSignal } = {},
  ): Promise<string> {
    this.assertOpen();
    if (!container)
      throw new InvalidInputError(
        'No blob container given and none configured. Set the container in the blob storage config.',
      );
    if (!blobName) throw new InvalidInputError('A blob name is required.');
    // An already opened (checked) file is uploaded from its descriptor, never reopened by path.
    const handle = typeof source === 'string' ? await open(source, 'r').catch(() => undefined) : source;
    if (!handle) throw new NotFoundError('The local file to upload was not found; nothing to upload.');
    const size = (await handle.stat()).size;
    const blob = this.service.getContainerClient(container).getBlockBlobClient(blobName);
    try {
      const stream = handle.createReadStream({ start: 0, end: Math.max(0, size - 1), autoClose: false });
      await blob.uploadStream(stream, Math.min(this.tuning.chunk_size, 8 * 1024 * 1024), this.tuning.max_concurrency, {
        blobHTTPHeaders: { blobContentType: mimeOf(blobName) },
        abortSignal: options.signal,
      });
    } catch (err) {
      throw await this.describeFailure(err, { account: this.account, container, path: blobName }, 'upload');
    } finally {
      if (typeof source === 'string') await handle.close();
    }
    this.logger.log({ account: this.account, container, blob: blobName, bytes: size }, 'blob uploaded');
    return blob.url;
  }

  /** Streams a blob to `destPath` (parallel range GETs above max_single_get); returns the bytes written. */
  async download(uri: string, destPath: string, options: { signal?: AbortSignal } = {}): Promise<number> {
    this.assertOpen();
    const target = this.locate(uri);
    const blob = this.service.getContainerClient(target.container).getBlobClient(target.path);
    // Written beside the destination and renamed at the end: a failed download leaves no partial file.
    const tmp = join(dirname(destPath), `.${basename(destPath)}.${randomBytes(6).toString('hex')}.part`);
    try {
      const props = await blob.getProperties({ abortSignal: options.signal });
      const size = props.contentLength ?? 0;
      const file = await open(tmp, 'w');
      try {
        await this.fetchRanges(blob, file, size, props.etag, options.signal);
      } finally {
        await file.close();
      }
      await rename(tmp, destPath);
      this.logger.log(
        { account: target.account, container: target.container, blob: target.path, bytes: size },
        'blob downloaded',
      );
      return size;
    } catch (err) {
      await rm(tmp, { force: true });
      throw await this.describeFailure(err, target, 'download');
    }
  }

  /** Refuses further transfers (the SDK keeps no connections that need closing). */
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private locate(uri: string): BlobUri {
    const target = parseBlobUri(uri, this.accountUrl);
    if (!target) throw new InvalidInputError(`'${sanitize(uri)}' is not a blob URI. ${URI_FORMS}`);
    if (target.account.toLowerCase() !== this.account.toLowerCase()) {
      throw new BlobAccessError(
        `Blob '${sanitize(uri)}' is in storage account '${target.account}', but this server holds credentials only for ` +
          `'${this.account}'. Use a blob in that account, or ask the operator to copy the data there.`,
        { account: target.account },
      );
    }
    return target;
  }

  private async fetchRanges(
    blob: BlobClient,
    file: FileHandle,
    size: number,
    etag: string | undefined,
    signal?: AbortSignal,
  ): Promise<void> {
    if (size <= this.tuning.max_single_get) {
      await fetchRange(blob, file, 0, size, etag, signal);
      return;
    }
    const chunk = this.tuning.chunk_size;
    const count = Math.ceil(size / chunk);
    // The first failure aborts the sibling requests.
    const stop = new AbortController();
    const linked = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < count; i = next++) {
        const offset = i * chunk;
        await fetchRange(blob, file, offset, Math.min(chunk, size - offset), etag, linked);
      }
    };
    let failure: { error: unknown } | undefined;
    const workers = Array.from({ length: Math.min(this.tuning.max_concurrency, count) }, () =>
      worker().catch((error: unknown) => {
        failure ??= { error };
        stop.abort();
      }),
    );
    // Every worker settles before the caller closes the file; the first failure is the one reported.
    await Promise.all(workers);
    if (failure) throw failure.error;
  }

  private async describeFailure(err: unknown, t: BlobUri, op: 'upload' | 'download'): Promise<unknown> {
    if (err instanceof AppError) return err;
    const name = err instanceof Error ? err.name : '';
    const where = `blob '${t.path}' in container '${t.container}' of storage account '${t.account}'`;
    if (
      name === 'CredentialUnavailableError' ||
      name === 'AuthenticationError' ||
      name === 'AggregateAuthenticationError'
    ) {
      return new BlobAccessError(
        `Could not get a token for storage account '${t.account}' to ${op} ${where} (${name}). ` +
          'The server needs an Azure identity (managed identity, workload identity, environment credentials or az login) ' +
          'or a connection string; ask the operator to configure one.',
        { account: t.account },
        { cause: err },
      );
    }
    if (!(err instanceof RestError || name === 'RestError')) return err;
    const rest = err as RestError;
    const status = rest.statusCode;
    const code = rest.code ?? '';
    if (status === 404) {
      const containerMissing =
        code === 'ContainerNotFound' || (code !== 'BlobNotFound' && !(await this.containerExists(t.container)));
      return containerMissing
        ? new NotFoundError(
            `Container '${t.container}' does not exist in storage account '${t.account}'. Check the container name, or ask the operator to create it.`,
            {
              container: t.container,
            },
          )
        : new NotFoundError(
            `Blob '${t.path}' not found in container '${t.container}' of storage account '${t.account}'. Check the path (blob names are case-sensitive).`,
            {
              container: t.container,
              blob: t.path,
            },
          );
    }
    if (status === 401 || status === 403) {
      return new BlobAccessError(
        `Storage account '${t.account}' refused to let this server ${op} ${where} (${status}${code ? ` ${code}` : ''}). ` +
          `Ask the operator to grant the server's identity a Storage Blob Data ${op === 'upload' ? 'Contributor' : 'Reader'} role on the container, or to fix the connection string.`,
        { account: t.account, status },
        { cause: err },
      );
    }
    if (status === 412) {
      return new UnavailableError(
        `The ${where} changed while it was being downloaded. Retry.`,
        { blob: t.path },
        { cause: err },
      );
    }
    const reason = status ? `HTTP ${status}${code ? ` ${code}` : ''}` : firstLine(rest.message);
    return new UnavailableError(
      `Could not ${op} ${where}: ${reason}. Retry later; if it persists, the storage account may be unreachable from this server.`,
      {},
      { cause: err },
    );
  }

  private async containerExists(container: string): Promise<boolean> {
    return this.service
      .getContainerClient(container)
      .exists()
      .catch(() => true);
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError('The blob store has been closed.');
  }
}

/** GETs `count` bytes at `offset` and writes them at the same offset of `file` (positional writes: ranges run in parallel). */
async function fetchRange(
  blob: BlobClient,
  file: FileHandle,
  offset: number,
  count: number,
  etag: string | undefined,
  signal?: AbortSignal,
): Promise<void> {
  if (count === 0) return;
  const res = await blob.download(offset, count, {
    abortSignal: signal,
    conditions: etag ? { ifMatch: etag } : undefined,
  });
  const body = res.readableStreamBody;
  if (!body) throw new UnavailableError('Blob storage returned no body for a download. Retry.');
  let position = offset;
  for await (const piece of body) {
    const buf = typeof piece === 'string' ? Buffer.from(piece) : piece;
    await file.write(buf, 0, buf.length, position);
    position += buf.length;
  }
  if (position - offset !== count) {
    throw new UnavailableError(
      `Blob download ended early (${position - offset} of ${count} bytes at offset ${offset}). Retry.`,
    );
  }
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? text;
}

export { parseBlobUri, type BlobUri } from './blob-uri';
