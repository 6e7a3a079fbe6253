import type pino from 'pino';
import { createHttpApp, PrincipalResolver, serveAdminDocs, serverApp, type ServerApp } from '@stoa/auth';
import { ConnectorMcpService, connectorFastPath, UpstreamPool } from '@stoa/connectors';
import { mcpFrontDoor } from '@stoa/mcp';
import type { RouterSettings } from './router.config';
import { RouterModule } from './router.module';

/** The router's Nest app with its fast path and admin docs, not yet listening (main.ts and embeddings share it). */
export async function createRouterApp(settings: RouterSettings, logger: pino.Logger): Promise<ServerApp> {
  const { server, name } = settings.config;
  const app = await createHttpApp(RouterModule.forRoot(settings), {
    logger,
    server,
    front: (nest) => {
      const principals = nest.get(PrincipalResolver);
      const fastPath = connectorFastPath(nest.get(UpstreamPool), principals);
      return mcpFrontDoor(nest.get(ConnectorMcpService).endpoint, principals, fastPath);
    },
  });
  serveAdminDocs(app, `Stoa router '${name}' admin API`);
  return serverApp(app, server);
}
