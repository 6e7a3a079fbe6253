import 'reflect-metadata';
import { refuseOpenNoopBind } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { connectorOverrides, connectorUsage } from '@stoa/connectors';
import { closeOnSignals, refuseStartOn, runMain, startupLogger } from '@stoa/core';
import { loadDispatcherSettings } from './dispatcher.config';
import { createDispatcherApp } from './dispatcher.bootstrap';

const USAGE = connectorUsage('dispatcher', 'WORKER_<NAME>_URL, WORKER_URLS, DISPATCHER_*, STOA_SESSION_KEY, REDIS_URL');

runMain('Dispatcher', async () => {
  const logger = startupLogger('stoa-dispatcher', 'buffered');
  const cli = parseCli(USAGE);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const settings = refuseStartOn(() =>
    loadDispatcherSettings(cli.file, connectorOverrides(cli, process.env), process.env),
  );
  const { name, workers, strategy } = settings.config;
  refuseOpenNoopBind(settings.config);
  const { listen, close } = await createDispatcherApp(settings, logger);
  closeOnSignals(logger, close);
  const url = await listen();
  logger.info(
    { dispatcher: name, url: `${url}/mcp`, workers: workers.map((w) => w.name), strategy },
    `${name} dispatcher listening`,
  );
});
