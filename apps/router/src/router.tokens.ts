export const ROUTER_SETTINGS = Symbol('ROUTER_SETTINGS');
