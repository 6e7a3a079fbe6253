import type pino from 'pino';
import { createHttpApp, PrincipalResolver, serveAdminDocs, serverApp, type ServerApp } from '@stoa/auth';
import { connectorFastPath, UpstreamPool } from '@stoa/connectors';
import type { GatewaySettings } from './gateway.config';
import { GatewayModule } from './gateway.module';
import { Guardrails } from './guardrails.service';

/** The gateway's Nest app with its policy fast path and admin docs, not yet listening. */
export async function createGatewayApp(settings: GatewaySettings, logger: pino.Logger): Promise<ServerApp> {
  const { server, name } = settings.config;
  const app = await createHttpApp(GatewayModule.forRoot(settings), { logger, server });
  app.use(connectorFastPath(app.get(UpstreamPool), app.get(PrincipalResolver), app.get(Guardrails)));
  serveAdminDocs(app, `Stoa gateway '${name}' admin API`);
  return serverApp(app, server);
}
