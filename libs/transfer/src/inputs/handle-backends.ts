import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type DataSource, LessThanOrEqual, type Repository } from 'typeorm';
import { HandleChunkEntity, HandleEntity } from './handle.entities';

export interface HandleMeta {
  serializer: string;
  size: number;
  type: string;
  created_at: number;
  expires_at: number;
}

/**
 * Where stashed objects live, keyed by (owner key, handle id). The payload is never unpickled on the host: it goes
 * from the kernel's stash to here and back into a kernel's inbox as bytes.
 */
export interface HandleBackend {
  readonly kind: 'local' | 'database';
  /** Takes `staged` (a file this store may move) as the payload of (owner, id), replacing one there. */
  put(owner: string, id: string, meta: HandleMeta, staged: string): Promise<void>;
  get(owner: string, id: string): Promise<HandleMeta | undefined>;
  /** A local file with the payload (the store's own, or a cached copy fetched once). */
  localPath(owner: string, id: string): Promise<string>;
  drop(owner: string, id: string): Promise<void>;
  /** The owner's handles, oldest first (for the per-owner budget). */
  list(owner: string): Promise<{ id: string; size: number }[]>;
  /** Removes handles expired at `now` (every owner); returns how many. */
  sweep(now: number): Promise<number>;
}

const readMeta = (file: string) =>
  readFile(file, 'utf8').then(
    (t) => JSON.parse(t) as HandleMeta,
    () => undefined,
  );

/** Handles as files in this replica's data dir (`{dir}/{owner}/{id}.pkl|.json`): the single-replica default. */
export class LocalHandles implements HandleBackend {
  readonly kind = 'local';
  constructor(private readonly dir: string) {}

  async put(owner: string, id: string, meta: HandleMeta, staged: string): Promise<void> {
    const dir = join(this.dir, owner);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await rename(staged, join(dir, `${id}.pkl`));
    await writeFile(join(dir, `${id}.json`), JSON.stringify(meta), { mode: 0o600 });
  }

  get(owner: string, id: string): Promise<HandleMeta | undefined> {
    return readMeta(join(this.dir, owner, `${id}.json`));
  }

  localPath(owner: string, id: string): Promise<string> {
    return Promise.resolve(join(this.dir, owner, `${id}.pkl`));
  }

  async drop(owner: string, id: string): Promise<void> {
    await rm(join(this.dir, owner, `${id}.pkl`), { force: true });
    await rm(join(this.dir, owner, `${id}.json`), { force: true });
  }

  async list(owner: string): Promise<{ id: string; size: number }[]> {
    const dir = join(this.dir, owner);
    const ids = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
    const metas = await Promise.all(ids.map(async (f) => ({ id: f.slice(0, -5), meta: await readMeta(join(dir, f)) })));
    return metas
      .filter((m): m is { id: string; meta: HandleMeta } => !!m.meta)
      .sort((a, b) => a.meta.created_at - b.meta.created_at)
      .map((m) => ({ id: m.id, size: m.meta.size }));
  }

  async sweep(now: number): Promise<number> {
    let removed = 0;
    for (const owner of await readdir(this.dir).catch(() => [] as string[])) {
      if (owner === 'staging' || owner === 'cache') continue;
      for (const f of await readdir(join(this.dir, owner)).catch(() => [] as string[])) {
        if (!f.endsWith('.json')) continue;
        const meta = await readMeta(join(this.dir, owner, f));
        if (!meta || meta.expires_at <= now) {
          await this.drop(owner, f.slice(0, -5));
          removed++;
        }
      }
    }
    return removed;
  }
}

const CHUNK_BYTES = 1024 * 1024;

/**
 * Handles in the database every replica of a pool shares (PostgreSQL), so a handle stashed on one replica is
 * usable on all of them. Metadata is written last, so a reader never sees half a payload; each replica keeps a
 * local copy of the payloads it used (handles never change), `{cacheDir}/{owner}/{id}.pkl`.
 */
export class DatabaseHandles implements HandleBackend {
  readonly kind = 'database';
  private readonly metas: Repository<HandleEntity>;
  private readonly chunks: Repository<HandleChunkEntity>;

  constructor(
    db: DataSource,
    private readonly cacheDir: string,
    private readonly ttlMs: number,
  ) {
    this.metas = db.getRepository(HandleEntity);
    this.chunks = db.getRepository(HandleChunkEntity);
  }

  async put(owner: string, id: string, meta: HandleMeta, staged: string): Promise<void> {
    await this.drop(owner, id);
    try {
      let seq = 0;
      for await (const piece of createReadStream(staged, { highWaterMark: CHUNK_BYTES }))
        await this.chunks.insert({
          ownerKey: owner,
          handleId: id,
          seq: seq++,
          data: (piece as Buffer).toString('base64'),
        });
      await this.metas.insert({
        ownerKey: owner,
        id,
        serializer: meta.serializer,
        type: meta.type,
        size: meta.size,
        createdAt: meta.created_at,
        expiresAt: meta.expires_at,
      });
    } catch (err) {
      await this.chunks.delete({ ownerKey: owner, handleId: id }).catch(() => undefined);
      throw err; // the caller removes the staged file
    }
    // The replica that stashed it keeps the payload as its cached copy.
    const cached = this.cachePath(owner, id);
    await mkdirFor(cached);
    await rename(staged, cached);
  }

  async get(owner: string, id: string): Promise<HandleMeta | undefined> {
    const row = await this.metas.findOneBy({ ownerKey: owner, id });
    return row
      ? {
          serializer: row.serializer,
          size: row.size,
          type: row.type,
          created_at: row.createdAt,
          expires_at: row.expiresAt,
        }
      : undefined;
  }

  async localPath(owner: string, id: string): Promise<string> {
    const cached = this.cachePath(owner, id);
    if (existsSync(cached)) return cached;
    await mkdirFor(cached);
    const part = `${cached}.${process.pid}.${Date.now()}.part`;
    const out = createWriteStream(part, { mode: 0o600 });
    try {
      for (let seq = 0; ; seq++) {
        const chunk = await this.chunks.findOneBy({ ownerKey: owner, handleId: id, seq });
        if (!chunk) break;
        if (!out.write(Buffer.from(chunk.data, 'base64')))
          await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      await rename(part, cached);
    } catch (err) {
      out.destroy();
      await rm(part, { force: true });
      throw err;
    }
    return cached;
  }

  async drop(owner: string, id: string): Promise<void> {
    await this.metas.delete({ ownerKey: owner, id });
    await this.chunks.delete({ ownerKey: owner, handleId: id });
    await rm(join(this.cacheDir, owner, `${id}.pkl`), { force: true });
  }

  async list(owner: string): Promise<{ id: string; size: number }[]> {
    const rows = await this.metas.find({
      where: { ownerKey: owner },
      order: { createdAt: 'ASC' },
      select: { id: true, size: true, createdAt: true, ownerKey: true },
    });
    return rows.map((r) => ({ id: r.id, size: r.size }));
  }

  async sweep(now: number): Promise<number> {
    const expired = await this.metas.find({
      where: { expiresAt: LessThanOrEqual(now) },
      select: { ownerKey: true, id: true },
      take: 1000,
    });
    for (const h of expired) await this.drop(h.ownerKey, h.id);
    await this.sweepCache(now);
    return expired.length;
  }

  /** Cached copies outlive nothing: a copy older than the handle TTL belongs to an expired handle. */
  private async sweepCache(now: number): Promise<void> {
    for (const owner of await readdir(this.cacheDir).catch(() => [] as string[]))
      for (const f of await readdir(join(this.cacheDir, owner)).catch(() => [] as string[])) {
        const file = join(this.cacheDir, owner, f);
        const st = await stat(file).catch(() => undefined);
        if (st && st.mtimeMs + this.ttlMs <= now) await rm(file, { force: true });
      }
  }

  /** Where this replica caches a payload; writers create its directory (`mkdirFor`), readers need not. */
  private cachePath(owner: string, id: string): string {
    return join(this.cacheDir, owner, `${id}.pkl`);
  }
}

const mkdirFor = (file: string) => mkdir(dirname(file), { recursive: true, mode: 0o700 });
