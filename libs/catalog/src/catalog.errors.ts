import { appError, ErrorKind } from '@stoa/core';

/** No artifact has this id. */
export class ArtifactNotFoundError extends appError('CATALOG_ARTIFACT_NOT_FOUND', ErrorKind.notFound) {
  constructor(id: string) {
    super(
      `Artifact not found: ${id}. Discover data with search_data (or list_domains to see which domains exist) and use the 'id' from a search_data hit.`,
    );
  }
}

/** query_catalog refused a statement: it would write, or read beyond the catalog tables. */
export class CatalogQueryRefusedError extends appError('CATALOG_QUERY_REFUSED', ErrorKind.forbidden) {}

/** query_catalog ran the statement and the database reported an error (syntax, unknown column, timeout…). */
export class CatalogQueryError extends appError('CATALOG_QUERY_FAILED', ErrorKind.invalid) {}
