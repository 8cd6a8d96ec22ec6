/** The public face of entitlements (DESIGN §23): features, plan and subscription entitlements, the customer's read. */
export {
  computeCustomerEntitlements,
  createFeature,
  getPlanEntitlements,
  listFeatures,
  putPlanEntitlements,
  putSubscriptionEntitlements,
  toFeature,
} from './entitlements.service.js';
export { EntitlementCache } from './entitlements.cache.js';
export {
  createFeatureBody,
  customerEntitlementsSchema,
  entitlementListSchema,
  featureSchema,
  putEntitlementsBody,
  type CustomerEntitlements,
} from './entitlements.schemas.js';
