/** The router as an embedding composes it: config, settings and the app builder. */
export { loadRouterSettings, routerConfigSchema, type RouterConfig, type RouterSettings } from './router.config';
export { createRouterApp } from './router.bootstrap';
