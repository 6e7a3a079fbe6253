import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream, existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { giveToKernel, type KernelDirs, stashDir } from '@stoa/kernel';
import { kernelDir } from '../files/kernel-files';
import { openKernelFile, unlinkKernelFile } from '../files/safe-files';
import { type HandleBackend, type HandleMeta, LocalHandles } from './handle-backends';

export const HANDLE_RE = /^h_[0-9a-f]{12}$/;
export type { HandleMeta };

export interface HandleSettings {
  dir: string;
  ttlMs: number;
  maxBytes: number;
  maxBytesPerOwner: number;
  maxCountPerOwner: number;
}

/**
 * Objects a kernel stashed with `stash(obj)`, kept per owner (pickled by the kernel, never unpickled here) in a
 * backend: this replica's data dir, or the database its replicas share. Another owner's handle is
 * indistinguishable from an unknown one.
 */
export class HandleStore {
  private readonly logger = new Logger(HandleStore.name);
  /** Creation times strictly increase, so "oldest first" is well defined for handles of the same millisecond. */
  private lastCreated = 0;

  constructor(
    private readonly s: HandleSettings,
    readonly backend: HandleBackend = new LocalHandles(s.dir),
  ) {}

  /** Moves handles a kernel just stashed (reported ids) from its stash dir into the owner's store. */
  async ingest(owner: string, dirs: KernelDirs, ids: readonly string[]): Promise<void> {
    const stash = stashDir(dirs);
    const key = ownerKey(owner);
    for (const id of ids) {
      if (!HANDLE_RE.test(id)) continue;
      try {
        const metaFile = await openKernelFile(dirs, join(stash, `${id}.json`));
        const raw = await metaFile.handle.readFile({ encoding: 'utf8' }).finally(() => metaFile.handle.close());
        const meta = JSON.parse(raw.slice(0, 10_000)) as Partial<HandleMeta>;
        const data = await openKernelFile(dirs, join(stash, `${id}.pkl`));
        const staged = join(this.s.dir, 'staging', `${id}-${randomBytes(6).toString('hex')}.pkl`);
        try {
          if (data.size > this.s.maxBytes)
            throw new Error(`${data.size} bytes is over the ${this.s.maxBytes}-byte limit`);
          await mkdir(join(this.s.dir, 'staging'), { recursive: true, mode: 0o700 });
          await pipeline(
            data.handle.createReadStream({ start: 0, end: Math.max(0, data.size - 1), autoClose: false }),
            createWriteStream(staged, { mode: 0o600 }),
          );
          const now = (this.lastCreated = Math.max(Date.now(), this.lastCreated + 1));
          await this.backend.put(
            key,
            id,
            {
              serializer: String(meta.serializer ?? 'pickle').slice(0, 20),
              size: data.size,
              type: String(meta.type ?? '').slice(0, 200),
              created_at: now,
              expires_at: now + this.s.ttlMs,
            },
            staged,
          );
          await this.enforceQuota(key);
        } finally {
          await data.handle.close();
          await rm(staged, { force: true });
        }
      } catch (err) {
        this.logger.warn({ handle: id, err: (err as Error).message }, 'a stashed object could not be stored');
      } finally {
        await unlinkKernelFile(dirs, join(stash, `${id}.pkl`));
        await unlinkKernelFile(dirs, join(stash, `${id}.json`));
      }
    }
  }

  /** The owner's live handle, or undefined (unknown, expired, or someone else's). */
  async lookup(owner: string, id: string): Promise<(HandleMeta & { key: string }) | undefined> {
    if (!HANDLE_RE.test(id)) return undefined;
    const key = ownerKey(owner);
    const meta = await this.backend.get(key, id);
    if (!meta) return undefined;
    if (meta.expires_at <= Date.now()) {
      await this.backend.drop(key, id);
      return undefined;
    }
    return { ...meta, key };
  }

  /** Copies a handle's payload (of a {@link lookup} result) where the kernel can read it; returns the kernel-visible path. */
  async provide(meta: { key: string }, id: string, dirs: KernelDirs): Promise<string> {
    const dest = join(await kernelDir(dirs, 'in'), `${id}.pkl`);
    // A handle never changes, and the inbox is the server's: a copy made for an earlier cell is reused (and the
    // payload is not even fetched).
    if (existsSync(dest)) return dest;
    const tmp = `${dest}.part`;
    await copyFile(await this.backend.localPath(meta.key, id), tmp);
    await giveToKernel(tmp, dirs);
    await rename(tmp, dest);
    return dest;
  }

  /** Removes expired handles of every owner. */
  sweep(now = Date.now()): Promise<number> {
    return this.backend.sweep(now);
  }

  /** Oldest handles go first when an owner keeps more than the per-owner byte or count budget. */
  private async enforceQuota(key: string): Promise<void> {
    const handles = await this.backend.list(key);
    let total = handles.reduce((n, h) => n + h.size, 0);
    let count = handles.length;
    for (const h of handles) {
      if (total <= this.s.maxBytesPerOwner && count <= this.s.maxCountPerOwner) break;
      total -= h.size;
      count--;
      await this.backend.drop(key, h.id);
    }
  }
}

/** The owner as stores key it (a hash: owner ids never appear in paths or rows). */
function ownerKey(owner: string): string {
  return createHash('sha256').update(owner).digest('hex').slice(0, 32);
}
