import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { StartupRefusedError } from '@stoa/core';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ArtifactLinks } from './artifacts/artifact-links';
import { AssetResolver } from './inputs/asset-resolver';
import { BlobStore } from './blob/blob-store';
import { CodeInputs } from './inputs/code-inputs';
import {
  BlobPublisher,
  type Destination,
  EmbeddedPublisher,
  LocalPublisher,
  PeerPublisher,
  UserPublisher,
} from './send/destinations';
import { PUBLISHERS, type Publisher } from './send/publisher';
import { ARTIFACT_RESOLVER, type ArtifactResolver } from './inputs/artifact-resolver';
import { HandleStore } from './inputs/handle-store';
import { DatabaseHandles } from './inputs/handle-backends';
import { realpathOrUndefined } from './files/safe-files';
import { ASSET_CATALOG, type AssetCatalog, TRANSFER_SETTINGS, type TransferSettings } from './transfer.settings';

const SWEEP_MS = 10 * 60_000;

/** The transfer parts built from config once: links, destinations, blob account, handle store, asset resolver. */
@Injectable()
export class TransferRuntime implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(TransferRuntime.name);
  readonly links: ArtifactLinks;
  readonly destinations: Destination[];
  readonly blob?: BlobStore;
  /** The catalog's storage account, when it differs from the publisher's. */
  private catalogBlob?: BlobStore;
  readonly handles: HandleStore;
  readonly assets: AssetResolver;
  readonly inputs: CodeInputs;
  private sweeper?: NodeJS.Timeout;

  constructor(
    @Inject(TRANSFER_SETTINGS) private readonly s: TransferSettings,
    @InjectDataSource() db: DataSource,
    @Optional() @Inject(ASSET_CATALOG) private readonly catalog?: AssetCatalog,
    @Optional() @Inject(PUBLISHERS) custom: readonly Publisher[] = [],
    @Optional() @Inject(ARTIFACT_RESOLVER) artifacts?: ArtifactResolver,
  ) {
    const c = s.config;
    this.links = new ArtifactLinks(c.link_signing_key ?? s.fallbackKey, c.link_ttl_seconds * 1000, s.publicUrl);
    const pub = s.publishers;
    this.blob = pub.blob ? new BlobStore({ ...pub.blob, ...c.blob }) : undefined;
    this.destinations = [{ kind: 'user', name: 'user', publisher: new UserPublisher(this.links) }];
    if (pub.local)
      this.destinations.push({
        kind: 'local',
        name: 'local',
        publisher: new LocalPublisher(resolve(pub.local.base_dir)),
      });
    if (this.blob) this.destinations.push({ kind: 'blob', name: 'blob', publisher: new BlobPublisher(this.blob) });
    for (const publisher of custom) {
      if (this.destinations.some((d) => d.name === publisher.name))
        throw new StartupRefusedError(
          `Two send destinations are named '${publisher.name}': give the custom publisher another name (user, local and blob are built in).`,
        );
      this.destinations.push({ kind: 'custom', name: publisher.name, publisher: new EmbeddedPublisher(publisher) });
    }
    for (const peer of s.peers) {
      if (this.destinations.some((d) => d.name === peer.name)) continue; // registered publishers win (reference §6.2)
      const credentials = PeerPublisher.credentials(peer, s.ownAudiences);
      this.destinations.push({
        kind: 'peer',
        name: peer.name,
        publisher: new PeerPublisher(peer, credentials, c.peer_binary),
      });
    }
    const handleDir = join(s.dataDir, 'handles');
    const ttlMs = c.handles.ttl_hours * 3_600_000;
    const shared = c.handles.store === 'database' || (c.handles.store === 'auto' && db.options.type === 'postgres');
    this.handles = new HandleStore(
      {
        dir: handleDir,
        ttlMs,
        maxBytes: c.handles.max_bytes,
        maxBytesPerOwner: c.handles.max_bytes_per_owner,
        maxCountPerOwner: c.handles.max_count_per_owner,
      },
      shared ? new DatabaseHandles(db, join(handleDir, 'cache'), ttlMs) : undefined,
    );
    const configured = [join(s.dataDir, 'datasets'), ...c.assets.roots.map((r) => resolve(r))];
    this.assets = new AssetResolver({
      roots: () =>
        [...configured, ...(this.catalog?.roots() ?? [])].map(realpathOrUndefined).filter((r): r is string => !!r),
      blobs: () => [this.blob, this.catalogBlob].filter((b): b is BlobStore => !!b),
      resolveId:
        this.catalog || artifacts
          ? async (id) => (await this.catalog?.storageUri(id)) ?? (await artifacts?.resolve(id))
          : undefined,
      maxBytes: c.assets.max_bytes,
      privateContainers: () => (pub.blob ? [pub.blob.container] : []),
    });
    this.inputs = new CodeInputs(this.assets, this.handles, c.handles.ttl_hours);
  }

  async onModuleInit(): Promise<void> {
    const access = this.catalog?.blobAccess();
    if (access) this.catalogBlob = new BlobStore({ ...access, ...this.s.config.blob });
    await mkdir(join(this.s.dataDir, 'datasets'), { recursive: true });
    await mkdir(join(this.s.dataDir, 'handles'), { recursive: true, mode: 0o700 });
    const peers = this.destinations.filter((d) => d.kind === 'peer').map((d) => d.name);
    if (peers.length) this.logger.log({ peers }, 'peer destinations for send');
    this.logger.log(
      { store: this.handles.backend.kind },
      this.handles.backend.kind === 'database'
        ? 'stash() handles are kept in the database: replicas sharing it share them'
        : "stash() handles are kept in this replica's data dir (transfer.handles.store: database shares them)",
    );
    this.sweeper = setInterval(() => void this.handles.sweep().catch(() => undefined), SWEEP_MS);
    this.sweeper.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.blob?.close();
    await this.catalogBlob?.close();
  }
}
