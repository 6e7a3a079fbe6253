import type { UpstreamAuthConfig } from '@stoa/connectors';
import type { PublishersConfig, TransferConfig } from './transfer.config';

/** A peer executor reachable by `{name}_send(to=name)`: from `peers:`/AGORA_PEER_REGISTRY or `publishers.servers`. */
export interface PeerDestination {
  name: string;
  url: string;
  /** Registry peers may use plain http (reference: trust_http for registry peers). */
  trustHttp: boolean;
  /** How to authenticate; undefined = forward the caller's own token (same deployment, reference behaviour). */
  auth?: UpstreamAuthConfig;
}

/** Catalog hooks for asset tags (set when the server has a data catalog). */
export interface AssetCatalog {
  /** Local source directories `<local>` may read. */
  roots(): string[];
  /** Storage URI of a catalog artifact id (`<blob>id</blob>`). */
  storageUri(id: string): Promise<string | undefined>;
  /** How to reach the catalog's blob sources, when it has any. */
  blobAccess(): { connection_string?: string; account_url?: string } | undefined;
}
export const ASSET_CATALOG = Symbol('ASSET_CATALOG');

export interface TransferSettings {
  serverName: string;
  /** Base URL of this server as users reach it (download links). */
  publicUrl: () => string;
  dataDir: string;
  config: TransferConfig;
  publishers: PublishersConfig;
  /** Registry peers then configured server publishers, own name removed. */
  peers: PeerDestination[];
  /** Audiences this server accepts (passthrough to a peer is only allowed to these). */
  ownAudiences: string[];
  /** Fallback link-signing key (sessions.id_signing_key). */
  fallbackKey?: string;
}
export const TRANSFER_SETTINGS = Symbol('TRANSFER_SETTINGS');
