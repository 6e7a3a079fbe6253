import 'reflect-metadata';
import { refuseOpenNoopBind } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { connectorOverrides, connectorUsage } from '@stoa/connectors';
import { closeOnSignals, refuseStartOn, runMain, startupLogger } from '@stoa/core';
import { loadGatewaySettings } from './gateway.config';
import { createGatewayApp } from './gateway.bootstrap';

const USAGE = connectorUsage('gateway', 'UPSTREAM_<NAME>_URL, GATEWAY_*, REDIS_URL, DATABASE_URL');

runMain('Gateway', async () => {
  const logger = startupLogger('stoa-gateway', 'buffered');
  const cli = parseCli(USAGE);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const settings = refuseStartOn(() =>
    loadGatewaySettings(cli.file, connectorOverrides(cli, process.env), process.env),
  );
  const { name, upstream } = settings.config;
  refuseOpenNoopBind(settings.config);
  const { listen, close } = await createGatewayApp(settings, logger);
  closeOnSignals(logger, close);
  const url = await listen();
  logger.info({ gateway: name, url: `${url}/mcp`, upstream: upstream.name }, `${name} gateway listening`);
});
