import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import { testClockScope } from '../../platform/test-clock-scope.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import type { AutoTopUpsTable, CreditGrantMovementsTable, CreditGrantsTable } from './credits.tables.js';
import './credits.tables.js';

export type CreditGrantRow = Selectable<CreditGrantsTable>;
export type CreditMovementRow = Selectable<CreditGrantMovementsTable>;
export type AutoTopUpRow = Selectable<AutoTopUpsTable>;

export async function insertCreditGrant(tx: Tx, row: Insertable<CreditGrantsTable>): Promise<CreditGrantRow> {
  return tx.insertInto('credit_grants').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function insertMovements(tx: Tx, rows: Insertable<CreditGrantMovementsTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.insertInto('credit_grant_movements').values(rows).execute();
}

export async function findCreditGrant(tx: Tx, tenantId: string, id: string): Promise<CreditGrantRow | undefined> {
  return tx.selectFrom('credit_grants').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findGrantOfInvoice(tx: Tx, tenantId: string, invoiceId: string): Promise<CreditGrantRow | undefined> {
  return tx.selectFrom('credit_grants').selectAll().where('tenant_id', '=', tenantId).where('invoice_id', '=', invoiceId).executeTakeFirst();
}

export async function listGrantsOfCustomer(tx: Tx, tenantId: string, customerId: string): Promise<CreditGrantRow[]> {
  return tx
    .selectFrom('credit_grants')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function movementsOfCustomer(tx: Tx, tenantId: string, customerId: string): Promise<CreditMovementRow[]> {
  return tx
    .selectFrom('credit_grant_movements')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * The spendable grants of these customers, locked in id order (one order for the single and the
 * batch path, so two finalizing transactions never deadlock on them): a concurrent draw waits here
 * and then reads the balance the other left.
 */
export async function lockSpendableGrants(
  tx: WriteTx,
  tenantId: string,
  customerIds: string[],
  category: 'paid' | 'promotional',
  now: Date,
): Promise<CreditGrantRow[]> {
  if (customerIds.length === 0) return [];
  return tx
    .selectFrom('credit_grants')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', customerIds)
    .where('category', '=', category)
    .where('status', '=', 'active')
    .where('remaining', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * Takes `amount` off a grant's balance; the last of it moves the grant to depleted. Guarded by the
 * balance, so no race can overspend: zero rows means the grant had less than that left.
 */
export async function drawFromGrant(tx: Tx, tenantId: string, id: string, amount: number, now: Date): Promise<CreditGrantRow | undefined> {
  return tx
    .updateTable('credit_grants')
    .set({
      remaining: sql`remaining - ${amount}`,
      status: sql`CASE WHEN remaining = ${amount} THEN 'depleted' ELSE status END`,
      updated_at: now,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'active')
    .where('remaining', '>=', amount)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Whether a grant in the test clock scope can ever expire (one with an expiry, active or waiting
 * for its top-up's payment): a test clock's advance skips the expiry sweep while none can.
 */
export function expirableGrantsInClockScope(): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM credit_grants WHERE status IN ('active', 'pending') AND expires_at IS NOT NULL
    AND ${testClockScope('credit_grants.tenant_id', 'credit_grants.customer_id')})`;
}

export async function grantsDueForExpiry(tx: Tx, mode: Mode | null, now: Date, limit: number): Promise<{ tenant_id: string; id: string }[]> {
  return tx
    .selectFrom('credit_grants')
    .select(['tenant_id', 'id'])
    .where(inMode(mode))
    .where('status', '=', 'active')
    .where('expires_at', '<=', now)
    .where(testClockScope('credit_grants.tenant_id', 'credit_grants.customer_id'))
    .orderBy('expires_at')
    .limit(limit)
    .execute();
}

/** Which of these customers hold a spendable grant (the billing run asks before drawing). */
export async function customersWithGrants(tx: Tx, tenantId: string, customerIds: string[], now: Date): Promise<Set<string>> {
  if (customerIds.length === 0) return new Set();
  const rows = await tx
    .selectFrom('credit_grants')
    .select('customer_id')
    .distinct()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', customerIds)
    .where('status', '=', 'active')
    .where('remaining', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
  return new Set(rows.map((r) => r.customer_id));
}

/** Spendable paid credit per customer and currency (active, unexpired grants). */
export async function paidBalancesOf(
  tx: Tx,
  tenantId: string,
  customerIds: string[],
  now: Date,
): Promise<{ customer_id: string; currency: string; balance: number }[]> {
  if (customerIds.length === 0) return [];
  const rows = await tx
    .selectFrom('credit_grants')
    .select(['customer_id', 'currency', (eb) => eb.fn.sum<string>('remaining').as('balance')])
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', customerIds)
    .where('category', '=', 'paid')
    .where('status', '=', 'active')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .groupBy(['customer_id', 'currency'])
    .execute();
  return rows.map((r) => ({ customer_id: r.customer_id, currency: r.currency, balance: Number(r.balance) }));
}

export async function upsertAutoTopUp(tx: Tx, row: AutoTopUpRow): Promise<AutoTopUpRow> {
  return tx
    .insertInto('auto_top_ups')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'customer_id']).doUpdateSet({
        enabled: row.enabled,
        currency: row.currency,
        threshold: row.threshold,
        amount: row.amount,
        payment_method_id: row.payment_method_id,
        updated_at: row.updated_at,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findAutoTopUp(tx: Tx, tenantId: string, customerId: string): Promise<AutoTopUpRow | undefined> {
  return tx.selectFrom('auto_top_ups').selectAll().where('tenant_id', '=', tenantId).where('customer_id', '=', customerId).executeTakeFirst();
}

export async function enabledAutoTopUps(tx: Tx, tenantId: string, customerIds: string[]): Promise<AutoTopUpRow[]> {
  if (customerIds.length === 0) return [];
  return tx
    .selectFrom('auto_top_ups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', customerIds)
    .where('enabled', '=', true)
    .where('in_flight_invoice_id', 'is', null)
    .execute();
}

/**
 * Claims the customer's auto top-up: marks it in flight (with a placeholder, replaced by the
 * invoice id) only if none is. The row lock makes a concurrent claim wait, then find it taken.
 */
export async function claimAutoTopUp(tx: Tx, tenantId: string, customerId: string, placeholder: string): Promise<AutoTopUpRow | undefined> {
  return tx
    .updateTable('auto_top_ups')
    .set({ in_flight_invoice_id: placeholder })
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('enabled', '=', true)
    .where('in_flight_invoice_id', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function setInFlightInvoice(tx: Tx, tenantId: string, customerId: string, invoiceId: string | null, expected: string): Promise<void> {
  await tx
    .updateTable('auto_top_ups')
    .set({ in_flight_invoice_id: invoiceId })
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('in_flight_invoice_id', '=', expected)
    .execute();
}

/** The payment methods auto top-ups named for these top-up invoices (invoices without one are absent). */
export async function paymentMethodsOfTopUps(tx: Tx, tenantId: string, invoiceIds: string[]): Promise<{ invoice_id: string; payment_method_id: string }[]> {
  if (invoiceIds.length === 0) return [];
  const rows = await tx
    .selectFrom('credit_grants')
    .select(['invoice_id', 'payment_method_id'])
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', 'in', invoiceIds)
    .where('payment_method_id', 'is not', null)
    .execute();
  return rows.map((r) => ({ invoice_id: r.invoice_id!, payment_method_id: r.payment_method_id! }));
}
