import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream, existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { giveToKernel, type KernelDirs, stashDir } from '@stoa/kernel';
import { kernelDir } from '../files/kernel-files';
import { openKernelFile, unlinkKernelFile } from '../files/safe-files';

export const HANDLE_RE = /^h_[0-9a-f]{12}$/;

export interface HandleMeta {
  serializer: string;
  size: number;
  type: string;
  created_at: number;
  expires_at: number;
}

export interface HandleSettings {
  dir: string;
  ttlMs: number;
  maxBytes: number;
  maxBytesPerOwner: number;
  maxCountPerOwner: number;
}

/**
 * Objects a kernel stashed with `stash(obj)`, kept per owner on disk (pickled by the kernel, never unpickled
 * here). Another owner's handle is indistinguishable from an unknown one.
 */
export class HandleStore {
  private readonly logger = new Logger(HandleStore.name);

  constructor(private readonly s: HandleSettings) {}

  /** Moves handles a kernel just stashed (reported ids) from its stash dir into the owner's store. */
  async ingest(owner: string, dirs: KernelDirs, ids: readonly string[]): Promise<void> {
    const stash = stashDir(dirs);
    for (const id of ids) {
      if (!HANDLE_RE.test(id)) continue;
      try {
        const metaFile = await openKernelFile(dirs, join(stash, `${id}.json`));
        const raw = await metaFile.handle.readFile({ encoding: 'utf8' }).finally(() => metaFile.handle.close());
        const meta = JSON.parse(raw.slice(0, 10_000)) as Partial<HandleMeta>;
        const data = await openKernelFile(dirs, join(stash, `${id}.pkl`));
        try {
          if (data.size > this.s.maxBytes)
            throw new Error(`${data.size} bytes is over the ${this.s.maxBytes}-byte limit`);
          const dir = await this.ownerDir(owner, true);
          await pipeline(
            data.handle.createReadStream({ start: 0, end: Math.max(0, data.size - 1), autoClose: false }),
            createWriteStream(join(dir, `${id}.pkl`), { mode: 0o600 }),
          );
          const now = Date.now();
          const full: HandleMeta = {
            serializer: String(meta.serializer ?? 'pickle').slice(0, 20),
            size: data.size,
            type: String(meta.type ?? '').slice(0, 200),
            created_at: now,
            expires_at: now + this.s.ttlMs,
          };
          await writeFile(join(dir, `${id}.json`), JSON.stringify(full), { mode: 0o600 });
          await this.enforceQuota(dir);
        } finally {
          await data.handle.close();
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
  async lookup(owner: string, id: string): Promise<(HandleMeta & { path: string }) | undefined> {
    if (!HANDLE_RE.test(id)) return undefined;
    const dir = await this.ownerDir(owner, false);
    const meta = await readFile(join(dir, `${id}.json`), 'utf8').then(
      (t) => JSON.parse(t) as HandleMeta,
      () => undefined,
    );
    if (!meta) return undefined;
    if (meta.expires_at <= Date.now()) {
      await this.drop(dir, id);
      return undefined;
    }
    return { ...meta, path: join(dir, `${id}.pkl`) };
  }

  /** Copies a handle's payload where the kernel can read it; returns the kernel-visible path. */
  async provide(meta: { path: string }, id: string, dirs: KernelDirs): Promise<string> {
    const dest = join(await kernelDir(dirs, 'in'), `${id}.pkl`);
    // A handle never changes, and the inbox is the server's: a copy made for an earlier cell is reused.
    if (existsSync(dest)) return dest;
    const tmp = `${dest}.part`;
    await copyFile(meta.path, tmp);
    await giveToKernel(tmp, dirs);
    await rename(tmp, dest);
    return dest;
  }

  /** Removes expired handles of every owner. */
  async sweep(now = Date.now()): Promise<number> {
    let removed = 0;
    const owners = await readdir(this.s.dir).catch(() => [] as string[]);
    for (const o of owners) {
      const dir = join(this.s.dir, o);
      for (const f of await readdir(dir).catch(() => [] as string[])) {
        if (!f.endsWith('.json')) continue;
        const meta = await readFile(join(dir, f), 'utf8').then(
          (t) => JSON.parse(t) as HandleMeta,
          () => undefined,
        );
        if (!meta || meta.expires_at <= now) {
          await this.drop(dir, f.slice(0, -5));
          removed++;
        }
      }
    }
    return removed;
  }

  private async ownerDir(owner: string, create: boolean): Promise<string> {
    const dir = join(this.s.dir, createHash('sha256').update(owner).digest('hex').slice(0, 32));
    if (create) await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** Oldest handles go first when an owner keeps more than the per-owner byte or count budget. */
  private async enforceQuota(dir: string): Promise<void> {
    const files = (await readdir(dir)).filter((f) => f.endsWith('.pkl'));
    const sized = await Promise.all(files.map(async (f) => ({ id: f.slice(0, -4), st: await stat(join(dir, f)) })));
    sized.sort((a, b) => a.st.mtimeMs - b.st.mtimeMs);
    let total = sized.reduce((n, f) => n + f.st.size, 0);
    let count = sized.length;
    for (const f of sized) {
      if (total <= this.s.maxBytesPerOwner && count <= this.s.maxCountPerOwner) break;
      total -= f.st.size;
      count--;
      await this.drop(dir, f.id);
    }
  }

  private async drop(dir: string, id: string): Promise<void> {
    await rm(join(dir, `${id}.pkl`), { force: true });
    await rm(join(dir, `${id}.json`), { force: true });
  }
}
