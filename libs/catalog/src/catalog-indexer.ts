import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import type { Logger } from '@nestjs/common';
import { lookup } from 'mime-types';
import type { BlobClients } from './catalog-blob';
import {
  type BlobSource,
  type CatalogArtifact,
  type CatalogSource,
  type LocalSource,
  SourceType,
} from './catalog.types';

/** Blob sources listed at once (reference: at most 8). */
const BLOB_CONCURRENCY = 8;

/** First 16 hex characters of sha256(storage_uri) (reference §4.9). */
export function artifactId(storageUri: string): string {
  return createHash('sha256').update(storageUri).digest('hex').slice(0, 16);
}

export interface Enumeration {
  artifacts: CatalogArtifact[];
  /** Storage-URI prefixes that could not be listed: their indexed rows are kept, not treated as stale. */
  unlisted: string[];
}

/** Lists every file of every source (dot-files and dot-directories skipped), stamped with `indexedAt`. */
export async function enumerateSources(
  sources: readonly CatalogSource[],
  blobs: BlobClients,
  indexedAt: string,
  logger: Logger,
): Promise<Enumeration> {
  const out: Enumeration = { artifacts: [], unlisted: [] };
  const local = sources.filter((s): s is LocalSource => s.type === SourceType.local);
  const remote = sources.filter((s): s is BlobSource => s.type === SourceType.blob);
  for (const src of local) await walkLocal(src, indexedAt, out, logger);
  const queue = [...remote];
  const worker = async (): Promise<void> => {
    for (let src = queue.shift(); src; src = queue.shift()) await listBlobs(src, blobs, indexedAt, out, logger);
  };
  await Promise.all(Array.from({ length: Math.min(BLOB_CONCURRENCY, queue.length) }, worker));
  return out;
}

function artifact(
  src: CatalogSource,
  uri: string,
  rel: string,
  size: number | null,
  indexedAt: string,
  fallbackType?: string,
): CatalogArtifact {
  const name = rel.split('/').pop() ?? rel;
  const meta = src.files[rel] ?? src.files[name] ?? {};
  return {
    id: artifactId(uri),
    name,
    storage_uri: uri,
    description: meta.description ?? src.description ?? null,
    domain: meta.domain ?? src.domain ?? null,
    source_type: src.type,
    content_type: lookup(name) || fallbackType || null,
    size_bytes: size,
    indexed_at: indexedAt,
  };
}

async function walkLocal(src: LocalSource, indexedAt: string, out: Enumeration, logger: Logger): Promise<void> {
  const top = await stat(src.path).catch(() => undefined);
  if (!top) {
    // Tolerated like the reference: the source may be mounted later; its old rows go as stale.
    logger.warn({ path: src.path }, 'catalog source not found; skipped');
    return;
  }
  if (top.isFile()) {
    out.artifacts.push(artifact(src, src.path, basename(src.path), top.size, indexedAt));
    return;
  }
  const walk = async (dir: string, rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      logger.warn(
        { path: dir, err: (err as Error).message },
        'catalog directory unreadable; its artifacts are kept as they were',
      );
      out.unlisted.push(dir + sep);
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.')) continue;
      const full = join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(full, r);
      else {
        // Regular files, and symlinks to files (symlinked directories are not followed: no loops).
        const st = e.isFile() || e.isSymbolicLink() ? await stat(full).catch(() => undefined) : undefined;
        if (st?.isFile()) out.artifacts.push(artifact(src, full, r, st.size, indexedAt));
      }
    }
  };
  await walk(src.path, '');
}

async function listBlobs(
  src: BlobSource,
  blobs: BlobClients,
  indexedAt: string,
  out: Enumeration,
  logger: Logger,
): Promise<void> {
  const base = `az://${src.account}/${src.container}/`;
  const found: CatalogArtifact[] = [];
  try {
    const client = blobs.container(src.account, src.container);
    for await (const b of client.listBlobsFlat({ prefix: src.prefix || undefined })) {
      // `prefix` names a folder or one blob; `data` must not pick up `database.csv`.
      const rel = !src.prefix
        ? b.name
        : b.name === src.prefix
          ? basename(b.name)
          : b.name.startsWith(`${src.prefix}/`)
            ? b.name.slice(src.prefix.length + 1)
            : '';
      if (!rel || b.name.endsWith('/') || rel.split('/').some((seg) => seg.startsWith('.'))) continue;
      found.push(
        artifact(src, base + b.name, rel, b.properties.contentLength ?? null, indexedAt, b.properties.contentType),
      );
    }
    out.artifacts.push(...found);
  } catch (err) {
    const where = base + src.prefix;
    logger.error(
      { source: where, err: (err as Error).message },
      'catalog blob source could not be listed; its artifacts are kept as they were',
    );
    out.unlisted.push(where);
  }
}
