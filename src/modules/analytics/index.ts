/** The public face of analytics: what organizations use to consolidate. */

export { checkCurrency, dayOf } from './analytics.service.js';
export {
  agingInvoiceSchema,
  agingQuery,
  agingSchema,
  churnSchema,
  cohortsSchema,
  movementSchema,
  mrrSchema,
  rangeQuery,
  snapshotSchema,
  waterfallQuery,
  waterfallSchema,
} from './analytics.schemas.js';
export { getChurn, getCohorts, getInvoiceAging, getMrr, getWaterfall, listAgingBucket, listWaterfallBucket, snapshotTenant } from './analytics.service.js';
export { liveMrrByCurrency, mrrOnDay } from './analytics.service.js';
export { churnReasonsQuery, churnReasonsSchema, getChurnReasons } from './churn-reasons.js';
