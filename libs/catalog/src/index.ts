/** `catalog:` config of an executor's server.yaml. */
export { catalogConfigSchema, type BlobAccessConfig, type CatalogConfig } from './catalog.config';
/** Resolves `catalog:` (and the catalog.yaml it names) against server.yaml's directory; undefined = catalog off. */
export { resolveCatalogConfig } from './catalog-sources';
/** The catalog service (indexing, search, read-only SQL), its module and migrations. */
export { CatalogService } from './catalog.service';
export { CatalogModule } from './catalog.module';
export { CATALOG_MIGRATIONS } from './catalog.migrations';
/** search_data, get_artifact, list_domains, query_catalog. */
export { catalogTools } from './catalog.tools';
/** Artifact id of a storage URI: first 16 hex characters of its sha256. */
export { artifactId } from './catalog-indexer';
/** Catalog errors. */
export { ArtifactNotFoundError, CatalogQueryError, CatalogQueryRefusedError } from './catalog.errors';
/** Catalog types. */
export {
  type BlobSource,
  type CatalogArtifact,
  type CatalogSearchHit,
  type CatalogSearchOptions,
  type CatalogSettings,
  type CatalogSource,
  type FileOverride,
  type LocalSource,
} from './catalog.types';
