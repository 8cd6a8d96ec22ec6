/** The public face of organizations (nothing else uses it yet beyond its routes). */
export { convertMinorUnits, parseRate } from './fx.js';
