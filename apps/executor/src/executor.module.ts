import { availableParallelism } from 'node:os';
import { delimiter, join } from 'node:path';
import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { ActivityModule, TelemetryModule } from '@stoa/activity';
import { AuthModule, entraSettings } from '@stoa/auth';
import { LoggingModule } from '@stoa/core';
import { ExecutionModule } from '@stoa/execution';
import { KernelModule } from '@stoa/kernel';
import { PersistenceModule } from '@stoa/persistence';
import { JOB_MIGRATIONS, JobsModule } from '@stoa/jobs';
import { SESSION_MIGRATIONS, SessionModule } from '@stoa/sessions';
import { kernelToolSpecs } from '@stoa/tools';
import { CATALOG_MIGRATIONS, CatalogModule, CatalogService } from '@stoa/catalog';
import { TOOL_SEARCH_BACKEND } from '@stoa/tools';
import {
  ARTIFACT_RESOLVER,
  PUBLISHERS,
  ASSET_CATALOG,
  type AssetCatalog,
  loadPeerRegistry,
  TRANSFER_MIGRATIONS,
  TransferModule,
  type PeerDestination,
} from '@stoa/transfer';
import type { KernelProcess } from '@stoa/kernel';
import { AdminController, OpenApiDocument } from './admin.controller';
import { AdminJobsController } from './admin-jobs.controller';
import type { ExecutorSettings } from './executor.config';
import type { ExecutorExtensions } from './executor.extensions';
import { ExecutorMcpService } from './executor-mcp.service';
import { EXECUTOR_SETTINGS } from './executor.tokens';
import { BatchProcessor } from './batch.processor';
import { JobTasks } from './tasks.backend';
import { CatalogController, CatalogDocument } from './catalog.controller';
import { HealthController } from './health.controller';
import { McpController } from './mcp.controller';
import { AdminTransfersController } from './admin-transfers.controller';
import { AdminCatalogController } from './admin-catalog.controller';
import { TransferController } from './transfer.controller';
import { ExecutorMetrics } from './executor-metrics';

/** The executor: one domain server with kernels, sessions and the MCP surface. */
@Module({})
export class ExecutorModule {
  static forRoot(s: ExecutorSettings, ext: ExecutorExtensions = {}): DynamicModule {
    const c = s.config;
    const publicUrl = ext.publicUrl ?? (() => s.publicUrl.value);
    return {
      module: ExecutorModule,
      imports: [
        LoggingModule.forRoot('stoa-executor'),
        ActivityModule.forRoot(c.activity, c.name),
        TelemetryModule.forRoot(c, { app: 'executor', server: c.name }),
        AuthModule.forRoot({
          auth: c.auth,
          publicBaseUrl: c.server.public_url,
          adminTokenFile: join(s.dataDir, `executor-${c.server.port}.admin-token`),
          principalResolver: ext.principalResolver,
        }),
        PersistenceModule.forRoot({
          database: c.database,
          defaultSqlitePath: join(s.dataDir, 'stoa.sqlite'),
          migrations: [...SESSION_MIGRATIONS, ...JOB_MIGRATIONS, ...TRANSFER_MIGRATIONS, ...CATALOG_MIGRATIONS],
        }),
        ...(s.catalog ? [CatalogModule.forRoot(s.catalog)] : []),
        KernelModule.forRoot({
          python: s.runtime?.python ?? c.environment.python,
          env: kernelEnv(s),
          passthroughEnv: c.environment.passthrough_env,
          startTimeoutMs: c.execution.start_timeout_seconds * 1000,
          dataDir: s.dataDir,
          sandbox: c.sandbox,
          allowSandboxFallback: c.auth.mode === 'noop',
          warmPool: c.sessions.warm_pool,
          warmPoolMax: c.sessions.warm_pool_max,
          readPaths: s.runtime?.readPaths,
          bootstrap: toolBootstrap(s),
          handleMaxBytes: c.transfer.handles.max_bytes,
        }),
        SessionModule.forRoot({
          maxSessions: c.sessions.max_sessions,
          idleTimeoutMs: c.sessions.idle_timeout_minutes * 60_000,
          sweepIntervalMs: c.sessions.sweep_interval_seconds * 1000,
          dataDir: s.dataDir,
          replica: s.replica,
          idSigningKey: c.sessions.id_signing_key,
        }),
        JobsModule.forRoot({
          config: c.jobs,
          prefix: c.jobs.prefix ?? `stoa:${c.name}`,
          settings: {
            replica: s.replica,
            retentionMs: c.jobs.retention_hours * 3_600_000,
            batchQueue: `${c.name}-batch`,
            concurrency: c.execution.parallel_max_concurrency ?? availableParallelism(),
          },
        }),
        TransferModule.forRoot(
          {
            serverName: c.name,
            publicUrl,
            dataDir: s.dataDir,
            config: c.transfer,
            publishers: c.publishers,
            peers: peerDestinations(s),
            ownAudiences: c.auth.mode === 'entra' ? entraSettings(c.auth).audiences : [],
            fallbackKey: c.sessions.id_signing_key,
          },
          [
            { provide: ASSET_CATALOG, inject: [{ token: CatalogService, optional: true }], useFactory: assetCatalog },
            ...(ext.publishers?.length ? [{ provide: PUBLISHERS, useValue: ext.publishers }] : []),
            ...(ext.artifactResolver ? [{ provide: ARTIFACT_RESOLVER, useValue: ext.artifactResolver }] : []),
          ],
        ),
        ExecutionModule.forRoot(
          {
            serverName: c.name,
            mode: c.execution.mode,
            promotionThresholdS: c.execution.promotion_threshold_s,
            defaultTimeoutS: c.execution.default_timeout,
            maxTimeoutS: c.execution.max_timeout,
            truncationThreshold: s.truncationThreshold,
            interruptGraceMs: c.execution.interrupt_grace_seconds * 1000,
            maxCodeBytes: c.execution.max_code_bytes,
          },
          ext.hooks,
        ),
      ],
      controllers: [
        HealthController,
        McpController,
        AdminController,
        AdminJobsController,
        AdminTransfersController,
        AdminCatalogController,
        CatalogController,
        TransferController,
      ],
      providers: [
        { provide: EXECUTOR_SETTINGS, useValue: s },
        ...(ext.toolSearch ? [{ provide: TOOL_SEARCH_BACKEND, useValue: ext.toolSearch }] : []),
        ExecutorMcpService,
        CatalogDocument,
        OpenApiDocument,
        BatchProcessor,
        JobTasks,
        ExecutorMetrics,
      ],
    };
  }
}

/** Kernel variables: the operator's, plus the tool modules' directories on PYTHONPATH. */
function kernelEnv(s: ExecutorSettings): Record<string, string> {
  const env = { ...s.runtime?.env, ...s.config.environment.env };
  const paths = [...s.domain.pythonPath, ...(env.PYTHONPATH ? [env.PYTHONPATH] : [])];
  if (paths.length) env.PYTHONPATH = paths.join(delimiter);
  return env;
}

/** Every new kernel gets one proxy per domain tool and list_tools() before its first execution. */
function toolBootstrap(s: ExecutorSettings): ((k: KernelProcess) => Promise<void>) | undefined {
  const specs = kernelToolSpecs(s.domain.catalog);
  return specs.length ? (kernel) => kernel.installTools(specs, 30_000) : undefined;
}

/** Registry peers (`peers:` + AGORA_PEER_REGISTRY, own name dropped), then static server publishers. */
function peerDestinations(s: ExecutorSettings): PeerDestination[] {
  const c = s.config;
  const registry = loadPeerRegistry(c.peers, process.env.AGORA_PEER_REGISTRY, c.name, (m) =>
    new Logger('Transfer').warn(m),
  );
  const statics: PeerDestination[] = c.publishers.servers.map((p) => ({
    name: p.name,
    url: p.url,
    trustHttp: p.trust_http,
  }));
  const peers: PeerDestination[] = [...registry].map(([name, p]) => ({
    name,
    url: p.url,
    trustHttp: true,
    auth: p.auth,
  }));
  return [...statics, ...peers.filter((p) => !statics.some((x) => x.name === p.name))];
}

/** The catalog as asset tags see it: its local roots, blob account and id → storage URI. */
function assetCatalog(c?: CatalogService): AssetCatalog | undefined {
  return (
    c && {
      roots: () => c.localRoots(),
      storageUri: async (id) => (await c.find(id))?.storage_uri,
      blobAccess: () => c.blobAccess(),
    }
  );
}
