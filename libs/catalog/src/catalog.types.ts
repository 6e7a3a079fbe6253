import type { BlobAccessConfig } from './catalog.config';

/** Where an artifact lives. */
export const SourceType = { local: 'local', blob: 'blob' } as const;
export type SourceType = (typeof SourceType)[keyof typeof SourceType];

/** Metadata for one file of a source (by relative path or bare name). */
export interface FileOverride {
  description?: string;
  domain?: string;
}

interface SourceMeta {
  domain?: string;
  description?: string;
  files: Record<string, FileOverride>;
}

/** A resolved local source: an absolute directory (walked) or file. */
export interface LocalSource extends SourceMeta {
  type: typeof SourceType.local;
  path: string;
}

/** A resolved blob source: every blob of `container` under `prefix` ('' = the whole container). */
export interface BlobSource extends SourceMeta {
  type: typeof SourceType.blob;
  account: string;
  container: string;
  prefix: string;
}

export type CatalogSource = LocalSource | BlobSource;

/** Everything the catalog needs at run time, resolved from `catalog:` (see resolveCatalogConfig). */
export interface CatalogSettings {
  sources: CatalogSource[];
  blob?: BlobAccessConfig;
  indexOnStart: boolean;
  queryTimeoutMs: number;
  /** PostgreSQL role for query_catalog. */
  queryRole?: string;
}

/** One indexed file or blob, as tools and callers see it. */
export interface CatalogArtifact {
  /** First 16 hex characters of sha256(storage_uri). */
  id: string;
  name: string;
  /** Absolute local path, or `az://{account}/{container}/{blob}`. */
  storage_uri: string;
  description: string | null;
  domain: string | null;
  source_type: SourceType;
  content_type: string | null;
  size_bytes: number | null;
  /** ISO-8601 time the artifact was first indexed. */
  indexed_at: string;
}

/** A search result: `score` is 0–1 relative to the best hit (1), null when listed as a fallback. */
export interface CatalogSearchHit extends CatalogArtifact {
  score: number | null;
}

export interface CatalogSearchOptions {
  domain?: string | null;
  source_type?: SourceType | null;
  /** Most results to return (1–1000, default 10). */
  top?: number;
}
