/** The gateway as an embedding composes it: config, settings and the app builder. */
export { gatewayConfigSchema, loadGatewaySettings, type GatewayConfig, type GatewaySettings } from './gateway.config';
export { createGatewayApp } from './gateway.bootstrap';
