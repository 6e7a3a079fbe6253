import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { copyFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidInputError, NotFoundError } from '@stoa/core';
import { giveToKernel, type KernelDirs } from '@stoa/kernel';
import type { BlobStore } from '../blob/blob-store';
import { kernelDir } from '../files/kernel-files';
import { isInside } from '../files/safe-files';

const CLOSED = /^<(\w+)>([^<>]+)<\/\1>$/;
const UNCLOSED = /^<(\w+)>([^<>]+)$/;

/** `<type>id</type>` (or the unclosed form LLMs produce), after trimming; undefined when not a tag. */
export function parseTag(value: string): { type: string; id: string } | undefined {
  const v = value.trim();
  const m = CLOSED.exec(v) ?? UNCLOSED.exec(v);
  return m ? { type: m[1]!, id: m[2]! } : undefined;
}

export const TAG_GUIDANCE =
  'Only <local>path</local> (a file under the directories this server shares) and <blob>id</blob> (an id from search_data) are resolvable.';
const DISCOVER = 'Find data with search_data (or list_domains) and use the load_path of a hit.';

export interface AssetSources {
  /** Directories `<local>` may read (resolved at start). */
  roots: () => readonly string[];
  /** Storage accounts assets may come from (the blob publisher's, the catalog's). */
  blobs: () => readonly BlobStore[];
  /** Catalog lookup: artifact id → storage URI (local path or az://…). */
  resolveId?: (id: string) => Promise<string | undefined>;
  maxBytes: number;
  /** Containers asset tags may not read (the send export container: other users' exports live there). */
  privateContainers: () => readonly string[];
}

/**
 * Resolves asset tags to files in a session's cache (reference §2.8) — `<local>` only under the allowed roots
 * (the reference lets `<local>/etc/passwd</local>` through), `<blob>` through the catalog, blob URIs through
 * the configured storage account.
 */
export class AssetResolver {
  private readonly inflight = new Map<string, Promise<string>>();

  constructor(private readonly s: AssetSources) {}

  /** The kernel-visible cache path for `tag`, fetching it on first use. */
  async resolve(tag: string, dirs: KernelDirs): Promise<string> {
    const parsed = parseTag(tag);
    if (!parsed)
      throw new InvalidInputError(
        `Invalid artifact format - expected <type>id</type>, got: ${tag}. ${TAG_GUIDANCE} ${DISCOVER}`,
      );
    const id = parsed.id.trim();
    if (parsed.type === 'local') return this.fetch(id, dirs);
    if (parsed.type === 'blob') {
      const uri = this.s.resolveId ? await this.s.resolveId(id) : undefined;
      if (!uri) throw new NotFoundError(`Blob artifact '${id}' is not in this server's data catalog. ${DISCOVER}`);
      return this.fetch(uri, dirs);
    }
    throw new InvalidInputError(`Unsupported artifact type: ${parsed.type}. ${TAG_GUIDANCE}`);
  }

  private async fetch(location: string, dirs: KernelDirs): Promise<string> {
    const cacheDir = await kernelDir(dirs, 'assets');
    const dest = join(cacheDir, createHash('sha256').update(location).digest('hex') + (safeExt(location) || '.dat'));
    if (existsSync(dest)) return dest;
    const running = this.inflight.get(dest);
    if (running) return running;
    const fetching = this.fetchInto(location, dest, dirs).finally(() => this.inflight.delete(dest));
    this.inflight.set(dest, fetching);
    return fetching;
  }

  /** Fetches to a temporary name and renames, so a cached path is always a complete, readable file. */
  private async fetchInto(location: string, dest: string, dirs: KernelDirs): Promise<string> {
    const tmp = `${dest}.${randomBytes(4).toString('hex')}.part`;
    try {
      await this.fetchTo(location, tmp);
      await giveToKernel(tmp, dirs);
      await rename(tmp, dest);
      return dest;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  private async fetchTo(location: string, dest: string): Promise<void> {
    const stores = this.s.blobs();
    const store = stores.find((b) => b.owns(location)) ?? stores.find((b) => b.canHandle(location));
    if (store) {
      const where = store.where(location);
      if (where && this.s.privateContainers().includes(where.container)) {
        throw new InvalidInputError(
          `'${location}' is in the container this server exports to, which asset tags do not read. ${TAG_GUIDANCE}`,
        );
      }
      await store.download(location, dest);
      const size = (await stat(dest)).size;
      if (size > this.s.maxBytes) {
        await rm(dest, { force: true });
        throw new InvalidInputError(
          `'${location}' is ${size} bytes, over this server's ${this.s.maxBytes}-byte asset limit. Use a smaller file or a subset.`,
        );
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !location.startsWith('file://')) {
      throw new InvalidInputError(
        `No fetcher available for asset: ${location}. Blob URIs need a storage account configured on this server; ${TAG_GUIDANCE}`,
      );
    } else {
      const source = await this.localSource(location);
      await copyFile(source, dest);
    }
  }

  /** A local path that exists under an allowed root (its real path, symlinks resolved). */
  private async localSource(location: string): Promise<string> {
    const path = location.startsWith('file://') ? fileURLToPath(location) : location;
    const roots = this.s.roots();
    const candidates = isAbsolute(path) ? [resolve(path)] : roots.map((r) => resolve(r, path));
    const allowed = candidates.filter((c) => roots.some((r) => isInside(c, r)));
    const where = roots.length ? roots.join(', ') : '(none configured)';
    if (!allowed.length)
      throw new InvalidInputError(
        `'${location}' is outside the directories this server shares (${where}). Use a file under one of them. ${DISCOVER}`,
      );
    for (const c of allowed) {
      const real = await realpath(c).catch(() => undefined);
      if (!real) continue;
      if (!roots.some((r) => isInside(real, r))) break; // a symlink out of the shared tree
      const st = await stat(real);
      if (!st.isFile())
        throw new InvalidInputError(`'${location}' is a directory, not a file. Name one file inside it.`);
      if (st.size > this.s.maxBytes)
        throw new InvalidInputError(
          `'${location}' is ${st.size} bytes, over this server's ${this.s.maxBytes}-byte asset limit. Use a smaller file or a subset.`,
        );
      return real;
    }
    throw new NotFoundError(`File not found: '${location}' (looked under ${where}). ${DISCOVER}`);
  }
}

function safeExt(location: string): string {
  const e = extname(location.split('?')[0] ?? '');
  return /^\.[A-Za-z0-9]{1,10}$/.test(e) ? e : '';
}
