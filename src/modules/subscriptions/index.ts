/** The public face of subscriptions: what flows (billing run, plan change, gifts, the importer) use. */
export {
  assertChargeable,
  assertMetricsMeteredOnce,
  lockCustomersMetering,
  assertPlanMeteredOnce,
  createSubscriptionRecord,
  endSubscriptionNow,
  getSubscription,
  getSubscriptionRow,
  listSubscriptions,
  lockForTransition,
  pauseSubscription,
  reactivateSubscription,
  scheduleCancellation,
  periodAfter,
  periodOf,
  remainingDays,
  resolvePlanPrice,
  resolveSubscriptionPrice,
  startingSchedule,
  toSubscription,
  type CreatedRecord,
  type PlanPrice,
  type SubscriptionRecordInput,
} from './subscriptions.service.js';
export type { SubscriptionRow } from './subscriptions.repository.js';
export { assertCommittable, removeMinimumCommitment, setMinimumCommitment } from './commitments.js';
export { minimumCommitmentBody, minimumCommitmentSchema, type MinimumCommitment, type MinimumCommitmentBody } from './subscriptions.schemas.js';
export {
  advanceSubscriptionPeriods,
  canTransition,
  subscriptionTransitions,
  transitionSubscription,
  transitionSubscriptions,
  type PeriodAdvance,
  type SubscriptionEvent,
} from './subscriptions.states.js';
export {
  subscriptionSchema,
  planChangeSchema,
  type CancelProration,
  type CancelSubscriptionBody,
  type ChangePlanBody,
  type CreateSubscriptionBody,
  type PlanChange,
  type SubscriptionUpdate,
  type UpdateSubscriptionBody,
  type Subscription,
} from './subscriptions.schemas.js';
export type { CancellationReason, SubscriptionStatus } from './subscriptions.tables.js';
export { CANCELLATION_REASONS } from './subscriptions.tables.js';
export { addInterval, daysBetween, periodBoundary, prorate, prorateByDays } from './periods.js';
export { subscriptionUsageSchema } from './subscriptions.schemas.js';
export { subscriptionUpdateSchema, updateSubscriptionBody } from './subscriptions.schemas.js';
export { cancelSubscriptionBody, canceledSubscriptionSchema, changePlanBody, createSubscriptionBody, listSubscriptionsQuery } from './subscriptions.schemas.js';
export {
  claimDueSubscriptions,
  claimDueSubscriptionsOfCustomers,
  nextPeriodEndInClockScope,
  delinquentSubscriptionIds,
  tenantsWithDelinquentSubscriptions,
  tenantsWithDueSubscriptions,
  trialsEndingBetween,
  trialsInClockScope,
  dueSubscriptionsInClockScope,
  updateSubscription,
  meteredPeriodCutoffs,
  RUNNING_STATUSES,
  runningSubscriptionsOfCustomers,
} from './subscriptions.service.js';
export {
  addSubscriptionItemRecord,
  getSubscriptionItemRow,
  itemsOfSubscriptions,
  listSubscriptionItems,
  removeSubscriptionItemRecord,
  setSubscriptionItemQuantity,
  toSubscriptionItem,
  type SubscriptionItemRow,
} from './subscription-items.js';
export {
  addSubscriptionItemBody,
  removeSubscriptionItemQuery,
  subscriptionItemChangeSchema,
  subscriptionItemSchema,
  updateSubscriptionItemBody,
  type AddSubscriptionItemBody,
  type RemoveSubscriptionItemQuery,
  type SubscriptionItem,
  type SubscriptionItemChange,
  type UpdateSubscriptionItemBody,
} from './subscriptions.schemas.js';
