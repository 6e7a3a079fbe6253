/** The validated activity config. */
export const ACTIVITY_CONFIG = Symbol('ACTIVITY_CONFIG');
