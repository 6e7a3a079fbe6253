import { PrincipalResolver } from '@stoa/auth';
import { connectorFastPath, runConnectorApp, UpstreamPool } from '@stoa/connectors';
import { loadRouterSettings } from './router.config';
import { RouterModule } from './router.module';

runConnectorApp({
  kind: 'router',
  env: 'UPSTREAM_<NAME>_URL',
  load: loadRouterSettings,
  module: (s) => RouterModule.forRoot(s),
  fastPath: (app) => connectorFastPath(app.get(UpstreamPool), app.get(PrincipalResolver)),
  describe: (s) => ({ upstreams: s.config.upstreams.map((u) => u.name) }),
});
