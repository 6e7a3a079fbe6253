import { z } from 'zod';
import { boolish, positiveInt, serverName } from '@stoa/config';
import { blobTuningSchema } from './blob/blob-store';

const MiB = 1024 * 1024;
/** The reference's object-transfer cap (§6.3, §6.5). */
export const MAX_TRANSFER_BYTES = 256 * MiB;

/** `transfer:` — links, handles, asset tags and object transfer limits. */
export const transferConfigSchema = z
  .strictObject({
    /** Lifetime of `/artifacts/…` download links. */
    link_ttl_seconds: positiveInt.default(3600).meta({ env: 'STOA_LINK_TTL_SECONDS' }),
    /** Key that signs download links (share it across replicas); falls back to sessions.id_signing_key, else random per process. */
    link_signing_key: z.string().min(16).optional().meta({ env: 'STOA_LINK_SIGNING_KEY' }),
    /** Largest object a peer transfer sends or accepts (serialised bytes). */
    max_object_bytes: positiveInt.max(MAX_TRANSFER_BYTES).default(MAX_TRANSFER_BYTES),
    /** Seconds the kernel may take to serialise or load an object. */
    kernel_timeout_seconds: positiveInt.default(60),
    /** Per-request timeout of an outbound peer transfer. */
    peer_timeout_seconds: positiveInt.default(60),
    /**
     * Send objects to Stoa peers as raw bytes (negotiated: a peer whose `GET /object-transfer/receive` lists
     * application/vnd.stoa.object) instead of base64 JSON; other peers always get the reference's JSON.
     */
    peer_binary: boolish.default(true).meta({ env: 'STOA_PEER_BINARY' }),
    /** Blob transfer tuning (MCP_BLOB_MAX_CONCURRENCY, MCP_BLOB_CHUNK_SIZE, MCP_BLOB_MAX_SINGLE_GET). */
    blob: blobTuningSchema.prefault({}),
    handles: z
      .strictObject({
        /**
         * Where stashed objects live: `local` (this replica's data dir), `database` (the configured database, so
         * every replica sharing it sees the same handles), `auto` (database on PostgreSQL, local on SQLite).
         */
        store: z.enum(['auto', 'local', 'database']).default('auto').meta({ env: 'STOA_HANDLE_STORE' }),
        /** How long a stashed object stays retrievable. */
        ttl_hours: z.number().positive().default(24),
        /** Largest object stash() accepts. */
        max_bytes: positiveInt.default(100 * MiB),
        /** Total bytes of handles one owner may keep (oldest are evicted beyond it). */
        max_bytes_per_owner: positiveInt.default(1024 * MiB),
        /** Handles one owner may keep (oldest are evicted beyond it). */
        max_count_per_owner: positiveInt.default(10_000),
      })
      .prefault({}),
    assets: z
      .strictObject({
        /** Extra directories `<local>…</local>` may read (the data dir's `datasets/` and catalog roots are always allowed). */
        roots: z.array(z.string()).default([]),
        /** Largest file an asset tag may fetch into a session. */
        max_bytes: positiveInt.default(2048 * MiB),
        /** Resolve tags in top-level string arguments of MCP tools as well (reference §2.8.3). */
        resolve_tool_arguments: boolish.default(true),
      })
      .prefault({}),
  })
  .prefault({});
export type TransferConfig = z.output<typeof transferConfigSchema>;

/** A statically configured peer server destination (reference ServerPublisher). */
const serverPublisherSchema = z.strictObject({
  name: serverName,
  url: z.string().url(),
  /** Allow plain http to this host (registry peers always may; reference trust_http). */
  trust_http: boolish.default(false),
});

/** `publishers:` — the `{name}_send` destinations besides `user` and registry peers. */
export const publishersConfigSchema = z
  .strictObject({
    local: z.strictObject({ base_dir: z.string().meta({ env: 'AGORA_LOCAL_PUBLISH_DIR' }) }).optional(),
    blob: z
      .strictObject({
        connection_string: z.string().optional().meta({ env: 'AZURE_STORAGE_CONNECTION_STRING' }),
        account_url: z.string().url().optional().meta({ env: 'AZURE_STORAGE_ACCOUNT_URL' }),
        container: z.string().min(3).max(63).default('stoa-exports').meta({ env: 'AGORA_BLOB_CONTAINER' }),
      })
      .refine(
        (b) => b.connection_string || b.account_url,
        'set connection_string, or account_url (managed identity / DefaultAzureCredential)',
      )
      .optional(),
    servers: z.array(serverPublisherSchema).default([]),
  })
  .prefault({});
export type PublishersConfig = z.output<typeof publishersConfigSchema>;
