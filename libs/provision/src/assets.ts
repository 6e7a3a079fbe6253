/**
 * Asset provisioning (reference §10.2): files fetched or copied into the asset cache dir before
 * kernels start. Sequential; each asset is skipped when present (and its checksum matches),
 * else written to a unique `{dest}.{pid}-{rand}.tmp` and renamed into place, so a reader never
 * sees a partial file and two replicas sharing a cache cannot interleave their writes.
 * Sources: http(s) URLs (streamed), `file://` URLs, absolute paths, `./` or `../` paths relative
 * to the config file. Azure blob URLs are refused for now, except https blob URLs that carry a SAS
 * signature (`sig=`), which are plain https downloads.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, isAbsolute, normalize, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AssetProvisionError } from './provision.errors';
import { sleep } from './process-utils';

/** One entry of `assets:` in a server YAML. */
export const assetSpecSchema = z
  .strictObject({
    name: z.string().min(1),
    source: z.string().min(1),
    /** Relative to the asset cache dir. */
    destination: z.string().min(1),
    /** Raises the download timeout to size_hint_mb × 3 s when that exceeds 600 s. */
    size_hint_mb: z.number().nonnegative().nullish(),
    /** sha256 hex of the file; verified after every fetch. */
    checksum: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'checksum must be the 64-character sha256 hex digest of the file')
      .transform((s) => s.toLowerCase())
      .nullish(),
  })
  .superRefine((asset, ctx) => {
    const destProblem = destinationProblem(asset.destination);
    if (destProblem) ctx.addIssue({ code: 'custom', path: ['destination'], message: destProblem });
    const srcProblem = sourceProblem(asset.name, asset.source);
    if (srcProblem) ctx.addIssue({ code: 'custom', path: ['source'], message: srcProblem });
  });
export type AssetSpec = z.output<typeof assetSpecSchema>;

export interface ProvisionAssetsOptions {
  cacheDir: string;
  /** Directory of the config file (`./` and `../` sources resolve against it). */
  baseDir: string;
  /** Waits between the 3 attempts; default [2000, 8000]. */
  retryBackoffMs?: number[];
  log?: (msg: string) => void;
}

export interface ProvisionedAsset {
  name: string;
  path: string;
  /** `cached`: already present and valid; `fetched`: downloaded or copied by this call. */
  status: 'cached' | 'fetched';
}

const ATTEMPTS = 3;

/** Provisions each asset in order; throws on the first one that still fails after 3 attempts. */
export async function provisionAssets(
  specs: readonly AssetSpec[],
  opts: ProvisionAssetsOptions,
): Promise<ProvisionedAsset[]> {
  const done: ProvisionedAsset[] = [];
  for (const spec of specs) done.push(await provisionOne(spec, opts));
  return done;
}

async function provisionOne(spec: AssetSpec, opts: ProvisionAssetsOptions): Promise<ProvisionedAsset> {
  const log = opts.log ?? (() => undefined);
  const problem = destinationProblem(spec.destination) ?? sourceProblem(spec.name, spec.source);
  if (problem) throw new AssetProvisionError(`Asset '${spec.name}': ${problem}`);
  const dest = resolve(opts.cacheDir, spec.destination);
  if (existsSync(dest)) {
    if (!spec.checksum) return { name: spec.name, path: dest, status: 'cached' };
    const actual = await sha256File(dest);
    if (actual === spec.checksum) return { name: spec.name, path: dest, status: 'cached' };
    log(`asset '${spec.name}': ${dest} has sha256 ${actual}, expected ${spec.checksum}; fetching it again`);
  }
  await mkdir(dirname(dest), { recursive: true });
  const backoff = opts.retryBackoffMs ?? [2000, 8000];
  let lastError = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const tmp = `${dest}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    try {
      log(`asset '${spec.name}': fetching ${redact(spec.source)} → ${dest} (attempt ${attempt}/${ATTEMPTS})`);
      await fetchTo(spec, tmp, opts.baseDir);
      if (spec.checksum) {
        const actual = await sha256File(tmp);
        if (actual !== spec.checksum)
          throw new Error(`checksum mismatch: expected sha256 ${spec.checksum}, got ${actual}`);
      }
      await rename(tmp, dest);
      return { name: spec.name, path: dest, status: 'fetched' };
    } catch (err) {
      await rm(tmp, { force: true });
      lastError = (err as Error).message;
      const wait = backoff[attempt - 1] ?? backoff.at(-1) ?? 0;
      if (attempt < ATTEMPTS)
        log(`asset '${spec.name}': attempt ${attempt}/${ATTEMPTS} failed: ${lastError}; retrying in ${wait} ms`);
      if (attempt < ATTEMPTS) await sleep(wait);
    }
  }
  throw new AssetProvisionError(
    `Failed to provision asset '${spec.name}' after ${ATTEMPTS} attempts: ${lastError}. ` +
      'Check its source (reachable from this machine?) and checksum under assets: in the server config, then restart.',
    { asset: spec.name },
  );
}

type SourceKind = 'http' | 'local' | 'blob' | 'unsupported';

function sourceKind(source: string): SourceKind {
  if (/^(az|abfss?|wasbs?):\/\//i.test(source)) return 'blob';
  if (/^https?:\/\//i.test(source)) {
    const url = parseUrl(source);
    if (!url) return 'unsupported';
    const blobHost = /\.(blob|dfs)\.core\.windows\.net$/i.test(url.hostname);
    return blobHost && !url.searchParams.has('sig') ? 'blob' : 'http';
  }
  if (/^file:\/\//i.test(source) || isAbsolute(source) || /^\.\.?\//.test(source)) return 'local';
  return 'unsupported';
}

function sourceProblem(name: string, source: string): string | undefined {
  const kind = sourceKind(source);
  if (kind === 'blob') {
    return (
      `Azure blob sources are not supported yet (asset '${name}': ${redact(source)}); ` +
      'use an https URL with a SAS token (…?sv=…&sig=…), or download the file and give a file path'
    );
  }
  if (kind === 'unsupported') {
    return (
      `Unsupported asset source '${redact(source)}' for asset '${name}'; ` +
      'use https://, http://, file://, an absolute path, or a ./ or ../ path relative to the config file'
    );
  }
  return undefined;
}

function destinationProblem(destination: string): string | undefined {
  if (isAbsolute(destination)) {
    return `asset destination must be relative to the asset cache dir (got '${destination}'); drop the leading '/'`;
  }
  const rel = normalize(destination);
  if (rel === '.' || rel === '..' || rel.startsWith(`..${sep}`)) {
    return `asset destination must name a file inside the asset cache dir (got '${destination}'); remove the '..' segments`;
  }
  return undefined;
}

async function fetchTo(spec: AssetSpec, tmp: string, baseDir: string): Promise<void> {
  if (sourceKind(spec.source) === 'local') {
    const from = /^file:\/\//i.test(spec.source) ? fileURLToPath(spec.source) : resolve(baseDir, spec.source);
    await copyFile(from, tmp);
    return;
  }
  const timeoutS = Math.max(600, (spec.size_hint_mb ?? 0) * 3);
  let res: Response;
  try {
    res = await fetch(spec.source, { signal: AbortSignal.timeout(timeoutS * 1000), redirect: 'follow' });
  } catch (err) {
    throw new Error(`GET ${redact(spec.source)}: ${describeFetchError(err)}`, { cause: err });
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new Error(`GET ${redact(spec.source)} answered HTTP ${res.status} ${res.statusText}`.trim());
  }
  await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), createWriteStream(tmp));
}

function describeFetchError(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

/** The URL without its query string (SAS tokens are secrets). */
function redact(source: string): string {
  const q = source.indexOf('?');
  return q < 0 ? source : `${source.slice(0, q)}?…`;
}

function parseUrl(source: string): URL | undefined {
  try {
    return new URL(source);
  } catch {
    return undefined;
  }
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
