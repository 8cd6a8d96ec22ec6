import type { Selectable } from 'kysely';
import { deferWrite } from '../../platform/db/pipeline.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import type { FeaturesTable, FeatureValue } from './entitlements.tables.js';
import './entitlements.tables.js';

export type FeatureRow = Selectable<FeaturesTable>;

export async function insertFeature(tx: Tx, row: FeatureRow): Promise<FeatureRow | undefined> {
  return tx
    .insertInto('features')
    .values({ ...row, values: row.values ? JSON.stringify(row.values) : null })
    .onConflict((oc) => oc.columns(['tenant_id', 'key']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function featuresOfTenant(tx: Tx, tenantId: string): Promise<FeatureRow[]> {
  return tx.selectFrom('features').selectAll().where('tenant_id', '=', tenantId).orderBy('key').execute();
}

export async function replacePlanEntitlements(tx: Tx, tenantId: string, planId: string, items: { feature_id: string; value: FeatureValue }[]): Promise<void> {
  await tx.deleteFrom('plan_entitlements').where('tenant_id', '=', tenantId).where('plan_id', '=', planId).execute();
  if (items.length > 0) {
    await tx
      .insertInto('plan_entitlements')
      .values(items.map((i) => ({ tenant_id: tenantId, plan_id: planId, feature_id: i.feature_id, value: JSON.stringify(i.value) })))
      .execute();
  }
}

export async function replaceSubscriptionEntitlements(
  tx: Tx,
  tenantId: string,
  subscriptionId: string,
  items: { feature_id: string; value: FeatureValue }[],
): Promise<void> {
  await tx.deleteFrom('subscription_entitlements').where('tenant_id', '=', tenantId).where('subscription_id', '=', subscriptionId).execute();
  if (items.length > 0) {
    await tx
      .insertInto('subscription_entitlements')
      .values(items.map((i) => ({ tenant_id: tenantId, subscription_id: subscriptionId, feature_id: i.feature_id, value: JSON.stringify(i.value) })))
      .execute();
  }
}

export async function planEntitlementsOf(tx: Tx, tenantId: string, planIds: string[]): Promise<{ plan_id: string; feature_id: string; value: FeatureValue }[]> {
  if (planIds.length === 0) return [];
  return tx
    .selectFrom('plan_entitlements')
    .select(['plan_id', 'feature_id', 'value'])
    .where('tenant_id', '=', tenantId)
    .where('plan_id', 'in', planIds)
    .execute();
}

export async function subscriptionEntitlementsOf(
  tx: Tx,
  tenantId: string,
  subscriptionIds: string[],
): Promise<{ subscription_id: string; feature_id: string; value: FeatureValue }[]> {
  if (subscriptionIds.length === 0) return [];
  return tx
    .selectFrom('subscription_entitlements')
    .select(['subscription_id', 'feature_id', 'value'])
    .where('tenant_id', '=', tenantId)
    .where('subscription_id', 'in', subscriptionIds)
    .execute();
}

/**
 * A change that may alter some customer's entitlements (a deferred insert, no row lock): its trigger
 * notifies every process's cache when the transaction commits (migration 0420).
 */
export async function recordEntitlementChange(tx: WriteTx, tenantIds: string[], now: Date): Promise<void> {
  if (tenantIds.length === 0) return;
  await deferWrite(tx, tx.insertInto('entitlement_changes').values(tenantIds.map((tenant_id) => ({ tenant_id, changed_at: now }))));
}
