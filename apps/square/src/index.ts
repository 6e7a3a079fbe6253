/** The coordination square as an embedding composes it: config, settings and the app builder. */
export { loadSquareSettings, squareConfigSchema, type SquareConfig, type SquareSettings } from './square.config';
export { createSquareApp } from './square.bootstrap';
