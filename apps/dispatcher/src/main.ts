import 'reflect-metadata';
import { createHttpApp, listenOn, PrincipalResolver, refuseOpenNoopBind, serveAdminDocs } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { connectorOverrides, connectorUsage, UpstreamPool } from '@stoa/connectors';
import { closeOnSignals, refuseStartOn, runMain, startupLogger } from '@stoa/core';
import { loadDispatcherSettings } from './dispatcher.config';
import { DispatcherModule } from './dispatcher.module';
import { DispatchService } from './dispatch.service';
import { dispatcherFastPath } from './fast-path';

const USAGE = connectorUsage('dispatcher', 'WORKER_<NAME>_URL, WORKER_URLS, DISPATCHER_*, STOA_SESSION_KEY, REDIS_URL');

runMain('Dispatcher', async () => {
  const logger = startupLogger('stoa-dispatcher', 'buffered');
  const cli = parseCli(USAGE);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const settings = refuseStartOn(() =>
    loadDispatcherSettings(cli.file, connectorOverrides(cli, process.env), process.env),
  );
  const { server, name, workers, strategy } = settings.config;
  refuseOpenNoopBind(settings.config);
  const app = await createHttpApp(DispatcherModule.forRoot(settings), { logger, server });
  app.use(dispatcherFastPath(app.get(DispatchService), app.get(UpstreamPool), app.get(PrincipalResolver)));
  serveAdminDocs(app, `Stoa dispatcher '${name}' admin API`);
  closeOnSignals(logger, () => app.close());
  const url = await listenOn(app, server);
  logger.info(
    { dispatcher: name, url: `${url}/mcp`, workers: workers.map((w) => w.name), strategy },
    `${name} dispatcher listening`,
  );
});
