import 'reflect-metadata';
import { createHttpApp, listenOn, refuseOpenNoopBind } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { closeOnSignals, refuseStartOn, runMain, StartupRefusedError, startupLogger } from '@stoa/core';
import { loadActivityConfig } from './activity.config';
import { ActivityAppModule } from './activity-app.module';

const USAGE = `Usage: node dist/apps/activity/main.js [--config <activity.yaml>] [--host H] [--port P]
Env: ACTIVITY_UI_SECRET, ACTIVITY_UI_STREAM_SECRET, ENTRA_TENANT_ID, ENTRA_CLIENT_ID, DATABASE_URL, REDIS_URL, … (see .env.example)`;

runMain('Activity', async () => {
  const logger = startupLogger('stoa-activity', 'buffered');
  const cli = parseCli(USAGE);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const config = refuseStartOn(() => loadActivityConfig(cli.file, cli.overrides, process.env));
  refuseOpenNoopBind(config);
  if (config.auth.mode === 'noop' && !config.ingest.writer_secret)
    throw new StartupRefusedError(
      'No writer secret: in no-op auth mode Stoa apps post events with a shared secret. Set ACTIVITY_UI_SECRET (at least 16 characters) here and on every publishing app, or ingest.writer_secret in the config.',
    );
  const app = await createHttpApp(ActivityAppModule.forRoot(config), { logger, server: config.server });
  closeOnSignals(logger, () => app.close());
  const url = await listenOn(app, config.server);
  logger.info({ url, redis: Boolean(config.redis_url) }, `activity dashboard listening at ${url}/`);
});
