import type { Insertable, Selectable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import type { SubscriptionItemsTable } from './subscriptions.tables.js';
import './subscriptions.tables.js';

export type SubscriptionItemRow = Selectable<SubscriptionItemsTable>;

export async function insertSubscriptionItem(tx: Tx, row: Insertable<SubscriptionItemsTable>): Promise<SubscriptionItemRow> {
  return tx.insertInto('subscription_items').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findSubscriptionItem(tx: Tx, tenantId: string, subscriptionId: string, id: string): Promise<SubscriptionItemRow | undefined> {
  return tx
    .selectFrom('subscription_items')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('subscription_id', '=', subscriptionId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The items of several subscriptions in one statement, oldest first (the order of their invoice lines). */
export async function itemsOfSubscriptionRows(tx: Tx, tenantId: string, subscriptionIds: readonly string[]): Promise<SubscriptionItemRow[]> {
  if (subscriptionIds.length === 0) return [];
  return tx
    .selectFrom('subscription_items')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('subscription_id', 'in', [...subscriptionIds])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function updateSubscriptionItemQuantity(tx: Tx, tenantId: string, id: string, quantity: number, now: Date): Promise<SubscriptionItemRow> {
  return tx
    .updateTable('subscription_items')
    .set({ quantity, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteSubscriptionItemRow(tx: Tx, tenantId: string, id: string): Promise<void> {
  await tx.deleteFrom('subscription_items').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}
