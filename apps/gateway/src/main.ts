import { PrincipalResolver } from '@stoa/auth';
import { connectorFastPath, runConnectorApp, UpstreamPool } from '@stoa/connectors';
import { loadGatewaySettings } from './gateway.config';
import { GatewayModule } from './gateway.module';
import { Guardrails } from './guardrails';

runConnectorApp({
  kind: 'gateway',
  env: 'UPSTREAM_<NAME>_URL, GATEWAY_*, REDIS_URL, DATABASE_URL',
  load: loadGatewaySettings,
  module: (s) => GatewayModule.forRoot(s),
  fastPath: (app) => connectorFastPath(app.get(UpstreamPool), app.get(PrincipalResolver), app.get(Guardrails)),
  describe: (s) => ({ upstream: s.config.upstream.name }),
});
