import type pino from 'pino';
import { createHttpApp, PrincipalResolver, serveAdminDocs, serverApp, type ServerApp } from '@stoa/auth';
import { mcpFrontDoor } from '@stoa/mcp';
import type { SquareSettings } from './square.config';
import { SquareMcpService } from './square-mcp.service';
import { SquareModule } from './square.module';

/** The square's Nest app (HTTP, both eras) with its admin docs, not yet listening. */
export async function createSquareApp(settings: SquareSettings, logger: pino.Logger): Promise<ServerApp> {
  const { server, name } = settings.config;
  const app = await createHttpApp(SquareModule.forRoot(settings), {
    logger,
    server,
    front: (nest) => mcpFrontDoor(nest.get(SquareMcpService).endpoint, nest.get(PrincipalResolver)),
  });
  serveAdminDocs(app, `Stoa square '${name}' admin API`);
  return serverApp(app, server);
}
