import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { getCustomer } from '../customers/index.js';
import { customerAccess } from '../dunning/index.js';
import { findPlan } from '../plans/index.js';
import { getSubscriptionRow, runningSubscriptionsOfCustomers } from '../subscriptions/index.js';
import {
  featuresOfTenant,
  insertFeature,
  planEntitlementsOf,
  recordEntitlementChange,
  replacePlanEntitlements,
  replaceSubscriptionEntitlements,
  subscriptionEntitlementsOf,
  type FeatureRow,
} from './entitlements.repository.js';
import type { CreateFeatureBody, CustomerEntitlements, PutEntitlementsBody } from './entitlements.schemas.js';
import type { FeatureValue } from './entitlements.tables.js';

export function toFeature(row: FeatureRow) {
  return { id: row.id, key: row.key, name: row.name, type: row.type, values: row.values, created_at: toIso(row.created_at) };
}

export async function createFeature(ctx: Ctx, body: CreateFeatureBody): Promise<FeatureRow> {
  if (body.type === 'enum' && !body.values) throw errors.invalidField('values', 'an enum feature needs its values');
  if (body.type !== 'enum' && body.values) throw errors.invalidField('values', `a ${body.type} feature has no list of values`);
  if (body.values && new Set(body.values).size !== body.values.length) throw errors.invalidField('values', 'must not repeat a value');
  const row = await insertFeature(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    key: body.key,
    name: body.name,
    type: body.type,
    values: body.values ?? null,
    created_at: ctx.now,
  });
  if (!row) throw errors.conflict(`a feature with key ${body.key} already exists`, 'feature_key_taken');
  await emitEvent(ctx, 'feature.created', toFeature(row));
  return row;
}

export async function listFeatures(ctx: ReadCtx): Promise<FeatureRow[]> {
  return featuresOfTenant(ctx.tx, ctx.tenantId);
}

/** Checks each value against its feature's type: 400 naming the item. */
async function resolveItems(ctx: Ctx, items: PutEntitlementsBody): Promise<{ feature_id: string; value: FeatureValue; key: string }[]> {
  const features = new Map((await featuresOfTenant(ctx.tx, ctx.tenantId)).map((f) => [f.key, f]));
  const seen = new Set<string>();
  return items.map((item, i) => {
    const feature = features.get(item.feature_key);
    if (!feature) throw errors.invalidField(`${i}.feature_key`, `no feature has the key ${item.feature_key}`);
    if (seen.has(feature.key)) throw errors.invalidField(`${i}.feature_key`, `${feature.key} is given twice`);
    seen.add(feature.key);
    const v = item.value;
    const ok =
      feature.type === 'boolean'
        ? typeof v === 'boolean'
        : feature.type === 'quantity'
          ? v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)
          : typeof v === 'string' && (feature.values ?? []).includes(v);
    if (!ok) {
      const wanted =
        feature.type === 'boolean'
          ? 'true or false'
          : feature.type === 'quantity'
            ? 'a whole number ≥ 0, or null for unlimited'
            : `one of ${(feature.values ?? []).join(', ')}`;
      throw errors.invalidField(`${i}.value`, `${feature.key} is a ${feature.type} feature: the value must be ${wanted}`);
    }
    return { feature_id: feature.id, value: v, key: feature.key };
  });
}

export async function putPlanEntitlements(ctx: Ctx, planId: string, items: PutEntitlementsBody) {
  const plan = await findPlan(ctx.tx, ctx.tenantId, planId);
  if (!plan) throw errors.notFound('plan');
  const resolved = await resolveItems(ctx, items);
  await replacePlanEntitlements(ctx.tx, ctx.tenantId, planId, resolved);
  await recordEntitlementChange(ctx.tx, [ctx.tenantId], ctx.now);
  const data = resolved.map((r) => ({ feature_key: r.key, value: r.value }));
  await emitEvent(ctx, 'entitlements.updated', { id: planId, object: 'plan_entitlements', plan_id: planId, entitlements: data });
  return data;
}

export async function getPlanEntitlements(ctx: ReadCtx, planId: string) {
  const plan = await findPlan(ctx.tx, ctx.tenantId, planId);
  if (!plan) throw errors.notFound('plan');
  const keys = new Map((await featuresOfTenant(ctx.tx, ctx.tenantId)).map((f) => [f.id, f.key]));
  return (await planEntitlementsOf(ctx.tx, ctx.tenantId, [planId]))
    .map((r) => ({ feature_key: keys.get(r.feature_id)!, value: r.value }))
    .sort((a, b) => (a.feature_key < b.feature_key ? -1 : 1));
}

export async function putSubscriptionEntitlements(ctx: Ctx, subscriptionId: string, items: PutEntitlementsBody) {
  const subscription = await getSubscriptionRow(ctx, subscriptionId);
  const resolved = await resolveItems(ctx, items);
  await replaceSubscriptionEntitlements(ctx.tx, ctx.tenantId, subscription.id, resolved);
  await recordEntitlementChange(ctx.tx, [ctx.tenantId], ctx.now);
  const data = resolved.map((r) => ({ feature_key: r.key, value: r.value }));
  await emitEvent(ctx, 'entitlements.updated', {
    id: subscription.id,
    object: 'subscription_entitlements',
    subscription_id: subscription.id,
    customer_id: subscription.customer_id,
    entitlements: data,
  });
  return data;
}

/** How two subscriptions' values of one feature combine: either grants a boolean, the larger quantity (null = unlimited), the first enum. */
function combine(type: FeatureRow['type'], a: FeatureValue | undefined, b: FeatureValue): FeatureValue {
  if (a === undefined) return b;
  if (type === 'boolean') return a === true || b === true;
  if (type === 'quantity') return a === null || b === null ? null : Math.max(a as number, b as number);
  return a;
}

const DEFAULTS: Record<FeatureRow['type'], FeatureValue> = { boolean: false, quantity: 0, enum: null };

/**
 * What a customer may use now: every feature of the tenant, valued from its running subscriptions'
 * plans with each subscription's overrides on top (features no subscription grants: false, 0 or
 * null) — a paused subscription grants nothing until it resumes (decision 0411) — and whether it is blocked (the payment wall; `extraBlock` adds the alert caps). Read from
 * the database; the route serves it from the app's cache (EntitlementCache).
 */
export async function computeCustomerEntitlements(
  ctx: ReadCtx,
  customerId: string,
  extraBlock?: (ctx: ReadCtx, customerId: string) => Promise<string | null>,
): Promise<CustomerEntitlements> {
  await getCustomer(ctx, customerId);
  const [features, subscriptions, access] = [
    await featuresOfTenant(ctx.tx, ctx.tenantId),
    (await runningSubscriptionsOfCustomers(ctx.tx, ctx.tenantId, [customerId])).filter((s) => s.status !== 'paused'),
    await customerAccess(ctx, customerId),
  ];
  const plans = await planEntitlementsOf(
    ctx.tx,
    ctx.tenantId,
    subscriptions.map((s) => s.plan_id),
  );
  const overrides = await subscriptionEntitlementsOf(
    ctx.tx,
    ctx.tenantId,
    subscriptions.map((s) => s.id),
  );
  const byId = new Map(features.map((f) => [f.id, f]));
  const values = new Map<string, FeatureValue>();
  for (const s of subscriptions) {
    const mine = new Map<string, FeatureValue>();
    for (const p of plans) if (p.plan_id === s.plan_id) mine.set(p.feature_id, p.value);
    for (const o of overrides) if (o.subscription_id === s.id) mine.set(o.feature_id, o.value);
    for (const [featureId, value] of mine) {
      const f = byId.get(featureId);
      if (f) values.set(f.id, combine(f.type, values.get(f.id), value));
    }
  }
  const out: Record<string, FeatureValue> = {};
  for (const f of features) out[f.key] = values.has(f.id) ? values.get(f.id)! : DEFAULTS[f.type];
  const alert = access.blocked ? null : extraBlock ? await extraBlock(ctx, customerId) : null;
  return {
    customer_id: customerId,
    features: out,
    blocked: access.blocked || alert !== null,
    blocked_reason: access.blocked ? 'payment_wall' : alert !== null ? 'alert' : null,
    blocked_by: alert,
    as_of: toIso(ctx.now),
  };
}

/**
 * A subscription paused or resumed changes what its customer may use (a paused one grants nothing,
 * decision 0411): `entitlements.updated` tells the tenant's application, with the customer's
 * features as they now are, in the pausing or resuming transaction.
 */
export async function announcePauseChange(ctx: Ctx, change: 'subscription.paused' | 'subscription.resumed', subscription: { id: string; customer_id: string }) {
  const now = await computeCustomerEntitlements(ctx, subscription.customer_id);
  await emitEvent(ctx, 'entitlements.updated', {
    id: subscription.customer_id,
    object: 'customer_entitlements',
    customer_id: subscription.customer_id,
    subscription_id: subscription.id,
    reason: change,
    features: now.features,
  });
}
