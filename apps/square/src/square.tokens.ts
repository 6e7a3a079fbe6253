/** The square's resolved settings (SquareSettings). */
export const SQUARE_SETTINGS = Symbol('SQUARE_SETTINGS');
