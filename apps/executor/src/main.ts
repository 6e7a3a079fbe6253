import 'reflect-metadata';
import { adminApiDocument, createHttpApp, listenOn, refuseOpenNoopBind } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { closeOnSignals, refuseStartOn, runMain, StartupRefusedError, startupLogger } from '@stoa/core';
import { OpenApiDocument } from './admin.controller';
import { loadExecutorSettings } from './executor.config';
import { ExecutorModule } from './executor.module';
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
  const { server, name } = settings.config;
  refuseOpenNoopBind(settings.config);
  const warm = cli.flags.warm === true;
  const { sidecars } = await provision(settings, (msg) => logger.info({ server: name }, msg), { warm });
  if (warm) return void process.stdout.write(`✓ Environment '${name}' is warm and ready.\n`);
  const app = await createHttpApp(ExecutorModule.forRoot(settings), {
    logger,
    server,
    rawPaths: ['/object-transfer/receive'],
  }).catch(async (err: unknown) => {
    await sidecars.stop();
    throw err;
  });
  app.get(OpenApiDocument).document = adminApiDocument(app, `Stoa executor '${name}' admin API`);
  closeOnSignals(logger, async () => {
    await app.close(); // kernels (pooled ones too) reaped, sessions marked
    await sidecars.stop();
  });
  const url = await listenOn(app, server);
  if (!server.public_url) settings.publicUrl.value = url.replace('0.0.0.0', '127.0.0.1');
  logger.info({ server: name, url: `${url}/mcp`, replica: settings.replica }, `${name} executor listening`);
});
