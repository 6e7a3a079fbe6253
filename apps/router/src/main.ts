import 'reflect-metadata';
import { createHttpApp, listenOn, PrincipalResolver, refuseOpenNoopBind, serveAdminDocs } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { connectorFastPath, connectorOverrides, connectorUsage, UpstreamPool } from '@stoa/connectors';
import { closeOnSignals, refuseStartOn, runMain, startupLogger } from '@stoa/core';
import { loadRouterSettings } from './router.config';
import { RouterModule } from './router.module';

const USAGE = connectorUsage('router', 'UPSTREAM_<NAME>_URL');

runMain('Router', async () => {
  const logger = startupLogger('stoa-router', 'buffered');
  const cli = parseCli(USAGE);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const settings = refuseStartOn(() => loadRouterSettings(cli.file, connectorOverrides(cli, process.env), process.env));
  const { server, name, upstreams } = settings.config;
  refuseOpenNoopBind(settings.config);
  const app = await createHttpApp(RouterModule.forRoot(settings), { logger, server });
  app.use(connectorFastPath(app.get(UpstreamPool), app.get(PrincipalResolver)));
  serveAdminDocs(app, `Stoa router '${name}' admin API`);
  closeOnSignals(logger, () => app.close());
  const url = await listenOn(app, server);
  logger.info({ router: name, url: `${url}/mcp`, upstreams: upstreams.map((u) => u.name) }, `${name} router listening`);
});
