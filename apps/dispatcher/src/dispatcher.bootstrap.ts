import type pino from 'pino';
import { createHttpApp, PrincipalResolver, serveAdminDocs, serverApp, type ServerApp } from '@stoa/auth';
import { ConnectorMcpService, taskRelay, UpstreamPool } from '@stoa/connectors';
import { mcpFrontDoor } from '@stoa/mcp';
import type { DispatcherSettings } from './dispatcher.config';
import { DispatcherModule } from './dispatcher.module';
import { DispatchService } from './dispatch.service';
import { dispatcherFastPath } from './fast-path';

/** The dispatcher's Nest app with its fast path and admin docs, not yet listening. */
export async function createDispatcherApp(settings: DispatcherSettings, logger: pino.Logger): Promise<ServerApp> {
  const { server, name } = settings.config;
  const app = await createHttpApp(DispatcherModule.forRoot(settings), {
    logger,
    server,
    rawPaths: ['/object-transfer/receive'], // relayed as it streams (TransferProxyController)
    front: (nest) => {
      const pool = nest.get(UpstreamPool);
      const principals = nest.get(PrincipalResolver);
      return mcpFrontDoor(
        nest.get(ConnectorMcpService).endpoint,
        principals,
        taskRelay(pool, principals), // tasks/* to the worker that owns the task
        dispatcherFastPath(nest.get(DispatchService), pool, principals), // tools/call to the worker picked
      );
    },
  });
  serveAdminDocs(app, `Stoa dispatcher '${name}' admin API`);
  return serverApp(app, server);
}
