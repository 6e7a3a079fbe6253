import { z } from 'zod';
import { boolish } from '@stoa/config';

/** Per-file metadata under a source's `files:` (an empty entry is allowed and means no override). */
const fileOverrideSchema = z
  .strictObject({ description: z.string().optional(), domain: z.string().optional() })
  .nullish()
  .transform((o) => o ?? {});

/** One catalog source: a local directory or file, or a blob container (prefix), as in catalog.yaml. */
export const catalogSourceSchema = z.strictObject({
  /** Local path (relative to the file that names it), `az://account/container[/prefix]` or a blob URL. */
  path: z.string().trim().min(1, 'path is required'),
  domain: z.string().optional(),
  description: z.string().optional(),
  /** Overrides by path relative to the source, or by bare file name. */
  files: z.record(z.string(), fileOverrideSchema).default({}),
});
export type CatalogSourceConfig = z.output<typeof catalogSourceSchema>;

/** Values that mean "no embeddings" in the reference; this server always uses full-text search. */
const NO_EMBEDDINGS = ['none', 'bm25', 'keyword', ''];

/** `search:` in catalog.yaml: accepted for compatibility; only full-text search exists here. */
const searchSchema = z
  .strictObject({
    embedding_model: z
      .string()
      .nullish()
      .superRefine((v, ctx) => {
        const model = (v ?? '').trim().toLowerCase();
        if (NO_EMBEDDINGS.includes(model)) return;
        ctx.addIssue({
          code: 'custom',
          message:
            model === 'azure-openai'
              ? 'azure-openai embeddings are not supported by this server; full-text search is used. Set embedding_model: none (or remove it).'
              : `unknown embedding_model '${v}'; this server only does full-text search (use none, bm25 or keyword)`,
        });
      }),
    azure_openai_endpoint: z.string().nullish(),
    azure_openai_deployment: z.string().nullish(),
    hybrid_alpha: z.number().min(0).max(1).default(0.5),
  })
  .prefault({});

/** catalog.yaml (reference §4.9); an empty file is an empty catalog. */
export const catalogFileSchema = z.strictObject({
  sources: z
    .array(catalogSourceSchema)
    .nullish()
    .transform((s) => s ?? []),
  search: searchSchema,
});
export type CatalogFile = z.output<typeof catalogFileSchema>;

/** `catalog.blob:` — how to reach blob sources. */
export const blobAccessSchema = z
  .strictObject({
    /** Wins over account_url (e.g. Azurite's `UseDevelopmentStorage=true` or an account key). */
    connection_string: z.string().min(1).optional(),
    /** `https://{account}.blob.core.windows.net`, reached with DefaultAzureCredential (managed identity, CLI login…). */
    account_url: z.url().optional(),
  })
  .refine(
    (b) => b.connection_string || b.account_url,
    'set connection_string, or account_url (reached with DefaultAzureCredential)',
  );
export type BlobAccessConfig = z.output<typeof blobAccessSchema>;

/** `catalog:` in an executor's server.yaml. Opt-in: without `file` and `sources` the catalog is off. */
export const catalogConfigSchema = z
  .strictObject({
    /** catalog.yaml, relative to server.yaml's directory. */
    file: z.string().trim().min(1).optional(),
    /** Inline sources (same shape as in catalog.yaml); relative paths resolve against server.yaml's directory. */
    sources: z.array(catalogSourceSchema).optional(),
    blob: blobAccessSchema.optional(),
    /** Index the sources when the server starts (only new files are added; vanished ones are removed). */
    index_on_start: boolish.default(true),
    /** Wall-clock limit of one query_catalog statement. */
    query_timeout_seconds: z.coerce.number().positive().max(300).default(10),
    /**
     * PostgreSQL only: the role query_catalog runs as (`SET LOCAL ROLE`). Required there, because the server's own
     * role can read every table (sessions, jobs…); the server grants it SELECT on the catalog table at start.
     */
    query_role: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/, 'use a plain PostgreSQL role name (letters, digits, _ and $)')
      .optional(),
  })
  .prefault({});
export type CatalogConfig = z.output<typeof catalogConfigSchema>;
