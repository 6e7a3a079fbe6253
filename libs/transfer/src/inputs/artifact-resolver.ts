/**
 * Maps a `<blob>id</blob>` asset id to a storage URI (a local path or `az://container/blob`) when the data
 * catalog does not know it. The URI is then read under the same rules as a catalog's: only inside the
 * configured asset roots and blob accounts, never the send export container.
 */
export interface ArtifactResolver {
  resolve(id: string): string | undefined | Promise<string | undefined>;
}

/** Injection token of an executor's {@link ArtifactResolver}. */
export const ARTIFACT_RESOLVER = Symbol('ARTIFACT_RESOLVER');

/** Download links' base URL (what `publicUrl()` of the reference returns); default: server.public_url, else the listen address. */
export type PublicUrl = () => string;
