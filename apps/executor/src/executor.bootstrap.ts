import type pino from 'pino';
import { adminApiDocument, createHttpApp, PrincipalResolver, serverApp, type ServerApp } from '@stoa/auth';
import { mcpFrontDoor } from '@stoa/mcp';
import { OpenApiDocument } from './admin.controller';
import type { ExecutorSettings } from './executor.config';
import type { ExecutorExtensions } from './executor.extensions';
import { ExecutorMcpService } from './executor-mcp.service';
import { ExecutorModule } from './executor.module';
import { provision } from './provisioning';

/** Provisions the environment and sidecars, then builds the executor's Nest app (what main.ts and embeddings share). */
export async function createExecutorApp(
  settings: ExecutorSettings,
  logger: pino.Logger,
  extensions: ExecutorExtensions = {},
): Promise<ServerApp> {
  const { name, server } = settings.config;
  const { sidecars } = await provision(settings, (msg) => logger.info({ server: name }, msg), { warm: false });
  const app = await createHttpApp(ExecutorModule.forRoot(settings, extensions), {
    logger,
    server,
    rawPaths: ['/object-transfer/receive'],
    front: (nest) => mcpFrontDoor(nest.get(ExecutorMcpService).endpoint, nest.get(PrincipalResolver)),
  }).catch(async (err: unknown) => {
    await sidecars.stop();
    throw err;
  });
  app.get(OpenApiDocument).document = adminApiDocument(app, `Stoa executor '${name}' admin API`);
  const built = serverApp(app, server, async () => {
    await app.close(); // kernels (pooled ones too) reaped, sessions marked
    await sidecars.stop();
  });
  return {
    ...built,
    listen: async (port) => {
      const url = await built.listen(port);
      if (!server.public_url) settings.publicUrl.value = url.replace('0.0.0.0', '127.0.0.1');
      return url;
    },
  };
}
