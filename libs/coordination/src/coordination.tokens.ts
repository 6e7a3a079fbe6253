/** The lib's options (CoordinationOptions). */
export const COORDINATION_OPTIONS = Symbol('COORDINATION_OPTIONS');
