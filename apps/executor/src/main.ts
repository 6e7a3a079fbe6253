import 'reflect-metadata';
import { refuseOpenNoopBind } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { closeOnSignals, refuseStartOn, runMain, StartupRefusedError, startupLogger } from '@stoa/core';
import { createExecutorApp } from './executor.bootstrap';
import { loadExecutorSettings } from './executor.config';
import { provision } from './provisioning';

const USAGE = `Usage: node dist/apps/executor/main.js --config <server.yaml> [--host H] [--port P]
       [--allow-unauthenticated-remote] [--warm]
Env: STOA_CONFIG, HOST, PORT, DATABASE_URL, STOA_DATA_DIR, STOA_PYTHON, … (see .env.example)`;

runMain('Executor', async () => {
  // Synchronous stdout: lines are never lost when the process exits (SIGTERM ends with process.exit).
  const logger = startupLogger('stoa-executor', 'sync');
  const cli = parseCli(USAGE, ['warm']);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const file = cli.file;
  if (!file) throw new StartupRefusedError(`No config file: pass --config <server.yaml> or set STOA_CONFIG.\n${USAGE}`);
  const settings = refuseStartOn(() =>
    loadExecutorSettings(file, cli.overrides, process.env, (msg) => logger.warn(msg)),
  );
  const { name } = settings.config;
  refuseOpenNoopBind(settings.config);
  if (cli.flags.warm === true) {
    await provision(settings, (msg) => logger.info({ server: name }, msg), { warm: true });
    return void process.stdout.write(`✓ Environment '${name}' is warm and ready.\n`);
  }
  const { listen, close } = await createExecutorApp(settings, logger);
  closeOnSignals(logger, close); // kernels (pooled ones too) reaped, sessions marked, sidecars stopped
  const url = await listen();
  logger.info({ server: name, url: `${url}/mcp`, replica: settings.replica }, `${name} executor listening`);
});
