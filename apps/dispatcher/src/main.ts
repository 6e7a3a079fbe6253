import { PrincipalResolver } from '@stoa/auth';
import { runConnectorApp, UpstreamPool } from '@stoa/connectors';
import { loadDispatcherSettings } from './dispatcher.config';
import { DispatcherModule } from './dispatcher.module';
import { DispatchService } from './dispatch.service';
import { dispatcherFastPath } from './fast-path';

runConnectorApp({
  kind: 'dispatcher',
  env: 'WORKER_<NAME>_URL, WORKER_URLS, DISPATCHER_*, STOA_SESSION_KEY, REDIS_URL',
  load: loadDispatcherSettings,
  module: (s) => DispatcherModule.forRoot(s),
  fastPath: (app) => dispatcherFastPath(app.get(DispatchService), app.get(UpstreamPool), app.get(PrincipalResolver)),
  describe: (s) => ({ workers: s.config.workers.map((w) => w.name), strategy: s.config.strategy }),
});
