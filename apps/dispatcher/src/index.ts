/** The dispatcher as an embedding composes it: config, settings and the app builder. */
export {
  dispatcherConfigSchema,
  loadDispatcherSettings,
  type DispatcherConfig,
  type DispatcherSettings,
} from './dispatcher.config';
export { createDispatcherApp } from './dispatcher.bootstrap';
