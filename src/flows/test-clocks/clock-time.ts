import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { currentTestClock } from '../../platform/test-clock-scope.js';
import { findCustomer } from '../../modules/customers/index.js';
import { getSubscriptionRow } from '../../modules/subscriptions/index.js';
import { testClockTime } from '../../modules/test-clocks/index.js';

/**
 * The instant an action on this customer happens at: its test clock's frozen_time when it lives
 * on one (a subscription created for it starts then, an add-on added to it prorates from then),
 * else the action's own. Inside a clock's advance the action's time already is the clock's
 * instant (the clock's frozen_time lags one step behind it), so it is kept.
 */
export async function customerNow(ctx: Ctx, customerId: string): Promise<Ctx> {
  if (currentTestClock() !== null) return ctx;
  const customer = await findCustomer(ctx.tx, ctx.tenantId, customerId);
  if (!customer?.test_clock_id) return ctx;
  const frozen = await testClockTime(ctx, customer.test_clock_id);
  return frozen ? { ...ctx, now: frozen } : ctx;
}

/** The same for an action on a subscription: its customer's clock (a missing subscription answers the usual 404). */
export async function subscriptionNow(ctx: Ctx, subscriptionId: string): Promise<Ctx> {
  if (currentTestClock() !== null) return ctx;
  return customerNow(ctx, (await getSubscriptionRow(ctx, subscriptionId)).customer_id);
}

/** For a preview, which runs in its own rolled-back transaction: the instant the action on this subscription would happen at. */
export async function subscriptionInstant(db: Kysely<DB>, tenantId: string, now: Date, subscriptionId: string): Promise<Date> {
  if (currentTestClock() !== null) return now;
  return db.transaction().execute(async (tx) => (await subscriptionNow({ tx, tenantId, now }, subscriptionId)).now);
}
