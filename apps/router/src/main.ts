import 'reflect-metadata';
import { refuseOpenNoopBind } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { connectorOverrides, connectorUsage } from '@stoa/connectors';
import { closeOnSignals, refuseStartOn, runMain, startupLogger } from '@stoa/core';
import { loadRouterSettings } from './router.config';
import { createRouterApp } from './router.bootstrap';

const USAGE = connectorUsage('router', 'UPSTREAM_<NAME>_URL');

runMain('Router', async () => {
  const logger = startupLogger('stoa-router', 'buffered');
  const cli = parseCli(USAGE);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const settings = refuseStartOn(() => loadRouterSettings(cli.file, connectorOverrides(cli, process.env), process.env));
  const { name, upstreams } = settings.config;
  refuseOpenNoopBind(settings.config);
  const { listen, close } = await createRouterApp(settings, logger);
  closeOnSignals(logger, close);
  const url = await listen();
  logger.info({ router: name, url: `${url}/mcp`, upstreams: upstreams.map((u) => u.name) }, `${name} router listening`);
});
