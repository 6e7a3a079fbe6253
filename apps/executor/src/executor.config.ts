import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { activityPublisherConfigSchema, metricsConfigSchema, tracingConfigSchema } from '@stoa/activity';
import { authConfigSchema, serverConfigSchema } from '@stoa/auth';
import { boolish, ConfigError, dataDirField, loadConfig, serverName, type ConfigSource } from '@stoa/config';
import { checkTimeouts, executionConfigSchema, resolveTruncationThreshold } from '@stoa/execution';
import { kernelEnvironmentFields, sandboxConfigSchema } from '@stoa/kernel';
import { assetSpecSchema, checkEnvironmentBuild, environmentBuildFields, sidecarListSchema } from '@stoa/provision';
import { databaseConfigSchema } from '@stoa/persistence';
import { jobsConfigSchema } from '@stoa/jobs';
import { catalogConfigSchema, resolveCatalogConfig, type CatalogSettings } from '@stoa/catalog';
import { peersConfigSchema, publishersConfigSchema, transferConfigSchema } from '@stoa/transfer';
import { sessionConfigSchema } from '@stoa/sessions';
import type { McpServerSpec, ResourceProvider } from '@stoa/mcp';
import { loadDomain, searchConfigSchema, skillsConfigSchema, toolsConfigSchema, type LoadedDomain } from '@stoa/tools';

/** `environment:` — how kernels' Python is built (@stoa/provision) and what they inherit (@stoa/kernel). */
const environmentSchema = z
  .strictObject({ ...environmentBuildFields, ...kernelEnvironmentFields })
  .superRefine(checkEnvironmentBuild)
  .prefault({});

/** The whole server.yaml of an executor. */
export const executorConfigSchema = z
  .strictObject({
    name: serverName,
    description: z.string().default(''),
    data_dir: dataDirField,
    server: serverConfigSchema,
    auth: authConfigSchema,
    activity: activityPublisherConfigSchema,
    metrics: metricsConfigSchema,
    tracing: tracingConfigSchema,
    database: databaseConfigSchema,
    environment: environmentSchema,
    sandbox: sandboxConfigSchema,
    /** Loopback services started before kernels; their URL is exported to kernels (reference §10.1). */
    sidecars: sidecarListSchema.default([]),
    /** Files fetched into the asset cache (MCP_ASSET_CACHE_DIR) at start (reference §10.2). */
    assets: z.array(assetSpecSchema).default([]),
    auto_provision: boolish.default(true),
    execution: executionConfigSchema,
    sessions: sessionConfigSchema,
    jobs: jobsConfigSchema,
    tools: toolsConfigSchema,
    skills: skillsConfigSchema,
    /** Bounds of search_{name}_tools queries. */
    search: searchConfigSchema,
    /** Download links, handles, asset tags, object-transfer limits. */
    transfer: transferConfigSchema,
    /** `{name}_send` destinations besides `user`: local dir, blob container, static peer servers. */
    publishers: publishersConfigSchema,
    /** Peer registry: name → root URL (or {url, auth}); overlaid by AGORA_PEER_REGISTRY. */
    peers: peersConfigSchema,
    /** Opt-in data catalog (catalog.yaml or inline sources): search_data, get_artifact, list_domains, query_catalog. */
    catalog: catalogConfigSchema,
    /**
     * CommonJS modules (relative to server.yaml) exporting `register(server, era)`, called on every MCP server
     * instance after the executor's tools: trusted code that adds resources, prompts or tools (the conformance
     * profile's fixtures). Empty in every normal server.
     */
    mcp_extensions: z.array(z.string().min(1)).default([]),
  })
  .superRefine((c, ctx) => {
    const problem = checkTimeouts(c.execution);
    if (problem) ctx.addIssue({ code: 'custom', path: ['execution', 'default_timeout'], message: problem });
    if (c.execution.max_code_bytes * 2 > c.server.max_body_mb * 1024 * 1024) {
      const need = Math.ceil((c.execution.max_code_bytes * 2) / (1024 * 1024));
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'max_body_mb'],
        message: `${c.server.max_body_mb} MiB leaves no room for a cell of execution.max_code_bytes (${c.execution.max_code_bytes} bytes, which JSON escaping can double): raise server.max_body_mb to at least ${need} or lower execution.max_code_bytes`,
      });
    }
    if (c.sidecars.length && c.sandbox.network === 'none') {
      ctx.addIssue({
        code: 'custom',
        path: ['sidecars'],
        message:
          'kernels reach sidecars on 127.0.0.1, which sandbox.network: none takes away; set sandbox.network: inherit to use sidecars',
      });
    }
  });
export type ExecutorConfig = z.output<typeof executorConfigSchema>;

/** Resolved, ready-to-use settings derived from the config. */
export interface ExecutorSettings {
  config: ExecutorConfig;
  baseDir: string;
  dataDir: string;
  replica: string;
  truncationThreshold: number;
  /** Tools, states and skills from the manifest and skills directory. */
  domain: LoadedDomain;
  /** This server's base URL as users reach it (download links); set from public_url, else after listen. */
  publicUrl: { value: string };
  /** The data catalog, when configured. */
  catalog?: CatalogSettings;
  /** `mcp_extensions`, loaded: what each registers on an MCP server instance. */
  extensions: McpExtension[];
  /** Filled by provisioning at start: the kernel interpreter, paths kernels read, variables they inherit. */
  runtime?: { python: string; readPaths: string[]; env: Record<string, string> };
}

/**
 * One `mcp_extensions` module: `register(server, era, kit)` for tools, prompts and methods (`kit` runs tools as
 * tasks), and optionally `resources` (a ResourceProvider served beside the executor's own skills and artifacts,
 * which own the resources/* methods).
 */
export interface McpExtension {
  register: NonNullable<McpServerSpec['extend']>;
  resources?: ResourceProvider;
}

function loadMcpExtension(path: string): McpExtension {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- config-named module, loaded at start
  const mod = require(path) as { register?: unknown; resources?: ResourceProvider };
  if (typeof mod.register !== 'function')
    throw new ConfigError(path, [`mcp_extensions: ${path} exports no register(server, era) function; export one`]);
  return { register: mod.register as McpExtension['register'], resources: mod.resources };
}

/** Loads server.yaml (+ env + CLI overrides) and derives the settings every module needs. */
export function loadExecutorSettings(
  file: ConfigSource,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  warn: (msg: string) => void,
): ExecutorSettings {
  const { config, baseDir } = loadConfig({ schema: executorConfigSchema, file, env, overrides });
  if (!file && !config.name) throw new ConfigError('(defaults)', ['name: required']);
  const dataDir = resolve(config.data_dir); // relative to the working directory, like every CLI path
  return {
    config,
    baseDir,
    dataDir,
    replica: config.sessions.replica ?? `${hostname()}:${config.server.port}`,
    publicUrl: {
      value:
        config.server.public_url ??
        `http://${config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host}:${config.server.port}`,
    },
    domain: loadDomain(config.name, config.tools, config.skills, baseDir),
    catalog: resolveCatalogConfig(config.catalog, baseDir),
    extensions: config.mcp_extensions.map((file) => loadMcpExtension(resolve(baseDir, file))),
    truncationThreshold: resolveTruncationThreshold(
      config.execution.output_truncation_threshold,
      env.CODE_OUTPUT_TRUNCATION_THRESHOLD,
      warn,
    ),
  };
}
