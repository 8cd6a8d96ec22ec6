/** The public face of the module: what other modules and flows may use. */

export { getPlan, toPlan } from './plans.service.js';
export type { PlanRow, PriceRow } from './plans.repository.js';
export type { CreatePlanBody, CreatePriceBody, Plan, Price } from './plans.schemas.js';
export type { IntervalUnit } from './plans.tables.js';
export { createPlanBody, createPriceBody, listPlansQuery, planSchema, priceParams, updatePlanBody } from './plans.schemas.js';
export { addPrice, archivePrice, createPlan, listPlans, updatePlan } from './plans.service.js';
export {
  describePricing,
  dimensionScheme,
  hasOwnPrice,
  isSimpleUnitPrice,
  matchDimensionPrice,
  priceQuantity,
  tierProblems,
  type DimensionPrice,
  type PricedQuantity,
  type PricingScheme,
  type Tier,
} from './pricing.js';
export type { PriceTier } from './plans.tables.js';
export { findPlan, findPrice, pricesOfPlans } from './plans.service.js';
