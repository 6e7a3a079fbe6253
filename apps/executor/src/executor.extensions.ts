import type { CustomPrincipalResolver } from '@stoa/auth';
import type { ExecutionHooks } from '@stoa/execution';
import type { ArtifactResolver, Publisher, PublicUrl } from '@stoa/transfer';
import type { ToolSearchBackend } from '@stoa/tools';

/** An executor's extension points; each one is optional and becomes a Nest provider under its own token. */
export interface ExecutorExtensions {
  /** Ranking for `search_{name}_tools` (default: BM25). */
  toolSearch?: ToolSearchBackend;
  /** Extra `{name}_send` destinations beside user / local / blob / peers. */
  publishers?: readonly Publisher[];
  /** validate / preprocess / postprocess around every execute call. */
  hooks?: ExecutionHooks;
  /** Identity from a request, asked before Entra / no-op auth. */
  principalResolver?: CustomPrincipalResolver;
  /** `<blob>id</blob>` ids the data catalog does not know. */
  artifactResolver?: ArtifactResolver;
  /** Base URL of download links (default: server.public_url, else the address the app listens on). */
  publicUrl?: PublicUrl;
}
