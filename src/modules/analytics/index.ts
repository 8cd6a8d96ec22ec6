/** The public face of analytics: what organizations use to consolidate. */
export { mrrOnDay } from './analytics.repository.js';
export { checkCurrency, dayOf } from './analytics.service.js';
