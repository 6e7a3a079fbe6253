import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { BlobClient, BlobServiceClient } from '@azure/storage-blob';
import { InvalidInputError, NotFoundError } from '@stoa/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAzurite, type Azurite } from '../../../test/support/azurite';
import { BlobAccessError, BlobStore, parseBlobUri } from '../src/blob/blob-store';

const CONTAINER = 'stoa-exports';
const MiB = 1024 * 1024;

let azurite: Azurite;
let dir: string;
let store: BlobStore;
let payload: Buffer;
let source: string;

beforeAll(async () => {
  Logger.overrideLogger(false);
  azurite = await startAzurite();
  await BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient(CONTAINER).create();
  dir = mkdtempSync(join(tmpdir(), 'stoa-blob-'));
  payload = randomBytes(5 * MiB + 12_345);
  source = join(dir, 'source.bin');
  writeFileSync(source, payload);
  store = new BlobStore({ connection_string: azurite.connectionString, container: CONTAINER });
});

afterAll(async () => {
  await store?.close();
  await azurite?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function dest(name: string): string {
  return join(dir, name);
}

describe('BlobStore against Azurite', () => {
  it('uploads a file and returns its URL under the account URL', async () => {
    const url = await store.upload(source, 'session-1/data.csv');
    expect(url).toBe(`${azurite.accountUrl}/${CONTAINER}/session-1/data.csv`);
    const props = await BlobServiceClient.fromConnectionString(azurite.connectionString)
      .getContainerClient(CONTAINER)
      .getBlobClient('session-1/data.csv')
      .getProperties();
    expect(props.contentLength).toBe(payload.length);
    expect(props.contentType).toBe('text/csv');
  });

  it('round-trips a 5 MB file through the account-URL form', async () => {
    const url = await store.upload(source, 'session-1/roundtrip.bin');
    const bytes = await store.download(url, dest('roundtrip.bin'));
    expect(bytes).toBe(payload.length);
    expect(readFileSync(dest('roundtrip.bin')).equals(payload)).toBe(true);
  });

  it('downloads through the az:// form of the configured account', async () => {
    await store.upload(source, 'session-2/az.bin');
    await store.download(`az://devstoreaccount1/${CONTAINER}/session-2/az.bin`, dest('az.bin'));
    expect(readFileSync(dest('az.bin')).equals(payload)).toBe(true);
  });

  it('downloads in parallel ranges when the blob exceeds max_single_get', async () => {
    const ranged = new BlobStore({
      connection_string: azurite.connectionString,
      max_single_get: MiB,
      chunk_size: MiB,
      max_concurrency: 3,
    });
    await store.upload(source, 'session-3/ranged.bin');
    const gets = vi.spyOn(BlobClient.prototype, 'download');
    const bytes = await ranged.download(`az://devstoreaccount1/${CONTAINER}/session-3/ranged.bin`, dest('ranged.bin'));
    expect(bytes).toBe(payload.length);
    expect(readFileSync(dest('ranged.bin')).equals(payload)).toBe(true);
    // Six 1 MiB ranges, requested in order (each worker takes the next index before it awaits).
    expect(gets.mock.calls.map((c) => [c[0], c[1]])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [i * MiB, Math.min(MiB, payload.length - i * MiB)]),
    );
    gets.mockRestore();
  });

  it('overwrites an existing blob on upload', async () => {
    const small = join(dir, 'small.txt');
    writeFileSync(small, 'second version');
    await store.upload(source, 'session-4/over.txt');
    const url = await store.upload(small, 'session-4/over.txt');
    await store.download(url, dest('over.txt'));
    expect(readFileSync(dest('over.txt'), 'utf8')).toBe('second version');
  });

  it('refuses a blob in another storage account', async () => {
    const err = await store
      .download(`az://otheraccount/${CONTAINER}/session-1/data.csv`, dest('other.bin'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobAccessError);
    expect((err as Error).message).toContain(
      "is in storage account 'otheraccount', but this server holds credentials only for 'devstoreaccount1'",
    );
    const https = await store
      .download('https://otheraccount.blob.core.windows.net/c/p.bin', dest('other.bin'))
      .catch((e: unknown) => e);
    expect(https).toBeInstanceOf(BlobAccessError);
  });

  it('reports a missing blob as not found and leaves no partial file', async () => {
    const err = await store
      .download(`az://devstoreaccount1/${CONTAINER}/nope/missing.bin`, dest('missing.bin'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe(
      `Blob 'nope/missing.bin' not found in container '${CONTAINER}' of storage account 'devstoreaccount1'. Check the path (blob names are case-sensitive).`,
    );
    expect(readdirSync(dir).filter((f) => f.includes('missing'))).toEqual([]);
  });

  it('reports a missing container as not found, on download and on upload', async () => {
    const down = await store
      .download('az://devstoreaccount1/no-such-container/a.bin', dest('a.bin'))
      .catch((e: unknown) => e);
    expect(down).toBeInstanceOf(NotFoundError);
    expect((down as Error).message).toContain(
      "Container 'no-such-container' does not exist in storage account 'devstoreaccount1'",
    );
    const up = await store.upload(source, 'a.bin', 'no-such-container').catch((e: unknown) => e);
    expect(up).toBeInstanceOf(NotFoundError);
    expect((up as Error).message).toContain("Container 'no-such-container' does not exist");
  });

  it('reports storage refusing the credentials as an access error', async () => {
    const wrongKey = azurite.connectionString.replace(
      /AccountKey=[^;]+/,
      `AccountKey=${randomBytes(64).toString('base64')}`,
    );
    const denied = new BlobStore({ connection_string: wrongKey, container: CONTAINER });
    const err = await denied
      .download(`az://devstoreaccount1/${CONTAINER}/session-1/data.csv`, dest('denied.bin'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobAccessError);
    expect((err as Error).message).toContain("Storage account 'devstoreaccount1' refused to let this server download");
  });

  it('recognises the supported URI forms', () => {
    expect(store.canHandle(`${azurite.accountUrl}/${CONTAINER}/x/y.bin`)).toBe(true);
    expect(store.canHandle('abfss://data@acct.dfs.core.windows.net/raw/file.parquet')).toBe(true);
    expect(store.canHandle('https://acct.blob.core.windows.net/data/file.csv')).toBe(true);
    expect(store.canHandle('https://example.com/data/file.csv')).toBe(false);
    expect(store.canHandle('/tmp/file.csv')).toBe(false);
    expect(parseBlobUri(`${azurite.accountUrl}/${CONTAINER}/a%20b/c.bin`, azurite.accountUrl)).toEqual({
      account: 'devstoreaccount1',
      container: CONTAINER,
      path: 'a b/c.bin',
    });
  });

  it('parses the abfss, https and az forms and explains malformed ones', () => {
    expect(parseBlobUri('abfss://data@acct.dfs.core.windows.net/raw/file.parquet')).toEqual({
      account: 'acct',
      container: 'data',
      path: 'raw/file.parquet',
    });
    expect(parseBlobUri('https://acct.dfs.core.windows.net/data/raw/f.csv?sv=secret')).toEqual({
      account: 'acct',
      container: 'data',
      path: 'raw/f.csv',
    });
    expect(parseBlobUri('az://acct/data/f.csv')).toEqual({ account: 'acct', container: 'data', path: 'f.csv' });
    expect(() => parseBlobUri('az://acct/data')).toThrow(InvalidInputError);
    expect(() => parseBlobUri('az://acct/data')).toThrow(
      /^Malformed blob URI 'az:\/\/acct\/data'\. Expected az:\/\/account\/container\/path/,
    );
    expect(() => parseBlobUri('abfss://acct.dfs.core.windows.net/raw')).toThrow(InvalidInputError);
  });

  it('says which forms it accepts when given something else', async () => {
    const err = await store.download('https://example.com/data/file.csv', dest('x.bin')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toMatch(
      /^'https:\/\/example\.com\/data\/file\.csv' is not a blob URI\. Expected az:/,
    );
  });
});
