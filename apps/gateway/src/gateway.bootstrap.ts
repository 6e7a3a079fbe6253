import type pino from 'pino';
import { createHttpApp, PrincipalResolver, serveAdminDocs, serverApp, type ServerApp } from '@stoa/auth';
import { ConnectorMcpService, connectorFastPath, UpstreamPool } from '@stoa/connectors';
import { mcpFrontDoor } from '@stoa/mcp';
import type { GatewaySettings } from './gateway.config';
import { GatewayModule } from './gateway.module';
import { Guardrails } from './guardrails.service';

/** The gateway's Nest app with its policy fast path and admin docs, not yet listening. */
export async function createGatewayApp(settings: GatewaySettings, logger: pino.Logger): Promise<ServerApp> {
  const { server, name } = settings.config;
  const app = await createHttpApp(GatewayModule.forRoot(settings), {
    logger,
    server,
    front: (nest) => {
      const principals = nest.get(PrincipalResolver);
      const fastPath = connectorFastPath(nest.get(UpstreamPool), principals, nest.get(Guardrails));
      return mcpFrontDoor(nest.get(ConnectorMcpService).endpoint, principals, fastPath);
    },
  });
  serveAdminDocs(app, `Stoa gateway '${name}' admin API`);
  return serverApp(app, server);
}
