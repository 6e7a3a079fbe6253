import 'reflect-metadata';
import { createHttpApp, listenOn, PrincipalResolver, refuseOpenNoopBind, serveAdminDocs } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { connectorFastPath, connectorOverrides, connectorUsage, UpstreamPool } from '@stoa/connectors';
import { closeOnSignals, refuseStartOn, runMain, startupLogger } from '@stoa/core';
import { loadGatewaySettings } from './gateway.config';
import { GatewayModule } from './gateway.module';
import { Guardrails } from './guardrails.service';

const USAGE = connectorUsage('gateway', 'UPSTREAM_<NAME>_URL, GATEWAY_*, REDIS_URL, DATABASE_URL');

runMain('Gateway', async () => {
  const logger = startupLogger('stoa-gateway', 'buffered');
  const cli = parseCli(USAGE);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const settings = refuseStartOn(() =>
    loadGatewaySettings(cli.file, connectorOverrides(cli, process.env), process.env),
  );
  const { server, name, upstream } = settings.config;
  refuseOpenNoopBind(settings.config);
  const app = await createHttpApp(GatewayModule.forRoot(settings), { logger, server });
  app.use(connectorFastPath(app.get(UpstreamPool), app.get(PrincipalResolver), app.get(Guardrails)));
  serveAdminDocs(app, `Stoa gateway '${name}' admin API`);
  closeOnSignals(logger, () => app.close());
  const url = await listenOn(app, server);
  logger.info({ gateway: name, url: `${url}/mcp`, upstream: upstream.name }, `${name} gateway listening`);
});
