import type { Ctx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import type { BillingAddress } from '../customers/index.js';
import { pricesOfPlans } from '../plans/index.js';
import { RUNNING_STATUSES, lockCustomersMetering, runningSubscriptionsOfCustomers } from '../subscriptions/index.js';
import {
  existingSubscriptionExternalIds,
  findCustomersByEmails,
  findPlansByCodes,
  insertNewCustomers,
  insertNewPlans,
  insertNewSubscriptions,
  refreshStatistics,
  releaseSavepoint,
  rollbackToSavepoint,
  savepoint,
  type CustomerInsert,
  type PlanInsert,
  type PlanRef,
  type PriceInsert,
  type SubscriptionInsert,
} from './importer.repository.js';
import type { CustomerRecord, FailedRow, PlanRecord, SubscriptionRecord } from './importer.schemas.js';

/**
 * One batch of valid records of one kind, inside the caller's transaction: inserted (real run) or
 * only looked up (dry run, in a read-only transaction). Records already in Kosh are skipped; a
 * record the database refuses is rolled back to its savepoint and reported, and the rest of the
 * batch still goes in. No events are emitted and no invoice is made (docs/decisions, "import").
 */

export type Valid<R> = { record: R; key: string; line?: number; index: number };
export type BatchResult = { created: number; skipped: number; failed: FailedRow[]; failedKeys: string[] };

function failure(kind: FailedRow['kind'], row: Valid<unknown>, error: string): FailedRow {
  return { kind, key: row.key, error, ...(row.line !== undefined ? { line: row.line } : { index: row.index }) };
}

// ── rows, built with the owning modules' rules ─────────────────────────────────────────────────

/** A plan as `createPlan` stores it, with its one price. */
export function toPlanRows(ctx: Ctx, record: PlanRecord): { plan: PlanInsert; price: PriceInsert } {
  const id = newId();
  return {
    plan: {
      tenant_id: ctx.tenantId,
      id,
      name: record.name,
      code: record.code,
      description: null,
      interval_unit: record.interval_unit,
      interval_count: record.interval_count,
      trial_days: 0,
      active: true,
      hsn_code: record.hsn_code ?? '',
      tax_rate_bp: null,
      features: [],
      metadata: {},
      created_at: ctx.now,
      updated_at: ctx.now,
    },
    price: {
      tenant_id: ctx.tenantId,
      id: newId(),
      plan_id: id,
      currency: record.currency,
      amount: record.amount,
      type: 'recurring',
      billing_scheme: 'per_unit',
      tiers_mode: null,
      tiers: null,
      package_size: null,
      metric_code: null,
      dimension_prices: null,
      hsn_code: null,
      active: true,
      archived_at: null,
      created_at: ctx.now,
    },
  };
}

/** A customer as `createCustomer` stores it: the address with every key present. */
export function toCustomerRow(ctx: Ctx, record: CustomerRecord): CustomerInsert {
  const a = record.billing_address;
  const address: BillingAddress | null = a
    ? {
        line1: a.line1 ?? null,
        line2: a.line2 ?? null,
        city: a.city ?? null,
        state_code: a.state_code || null,
        postal_code: a.postal_code ?? null,
        country: a.country,
      }
    : null;
  return {
    tenant_id: ctx.tenantId,
    id: newId(),
    email: record.email,
    name: record.name ?? null,
    external_id: record.external_id ?? null,
    phone: record.phone ?? null,
    gstin: record.gstin ?? null,
    billing_address: address,
    sez: false,
    metadata: record.metadata ?? {},
    test_clock_id: null,
    parent_customer_id: null,
    bill_to: 'self',
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

/**
 * A subscription as `createSubscriptionRecord` stores a stated period (subscriptions module): the
 * period kept as given (index -1, anchored at its end, so the billing run invoices the next period
 * at current_period_end), ended/canceled at the period end when canceled, paused now when paused.
 * A trialing subscription's trial is its current period (trial_end as given, else the period end).
 */
export function toSubscriptionRow(
  ctx: Ctx,
  record: SubscriptionRecord,
  refs: { customerId: string; plan: PlanRef; currency: string; priceId?: string | null },
): SubscriptionInsert {
  const ended = record.status === 'canceled' ? record.current_period_end : null;
  return {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: refs.customerId,
    plan_id: refs.plan.id,
    // The price it bills, as createSubscriptionRecord stores it.
    price_id: refs.priceId ?? null,
    currency: refs.currency,
    quantity: 1,
    status: record.status,
    interval_unit: refs.plan.interval_unit,
    interval_count: refs.plan.interval_count,
    billing_anchor: record.current_period_end,
    period_index: -1,
    current_period_start: record.current_period_start,
    current_period_end: record.current_period_end,
    cancel_at_period_end: record.cancel_at_period_end,
    trial_start: record.status === 'trialing' ? record.current_period_start : null,
    trial_end: record.trial_end ?? (record.status === 'trialing' ? record.current_period_end : null),
    // As a cancellation scheduled in Kosh records it: when Kosh learned of it.
    canceled_at: ended ?? (record.cancel_at_period_end ? ctx.now : null),
    paused_at: record.status === 'paused' ? ctx.now : null,
    ended_at: ended,
    gift_code: null,
    gifted_by: null,
    external_id: record.external_id,
    latest_invoice_id: null,
    collection_method: 'send_invoice',
    metadata: {},
    cancellation_reason: null,
    cancellation_feedback: null,
    minimum_amount: null,
    minimum_price_id: null,
    minimum_since: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

// ── inserting a batch, one bad row at a time if need be ────────────────────────────────────────

/** SQLSTATE classes that belong to the row (bad data, a constraint), not to the connection. */
function isRowError(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^(22|23)/.test(code);
}

/**
 * All rows in one statement; if the database refuses it, each row under its own savepoint, so a
 * refused row is reported and leaves nothing behind while the others go in.
 */
async function insertEach<T extends Valid<unknown>>(
  tx: Tx,
  items: T[],
  insert: (items: T[]) => Promise<string[]>,
): Promise<{ created: Set<string>; refused: { item: T; error: string }[] }> {
  await savepoint(tx, 'import_batch');
  try {
    const created = await insert(items);
    await releaseSavepoint(tx, 'import_batch');
    return { created: new Set(created), refused: [] };
  } catch (error) {
    if (!isRowError(error)) throw error;
    await rollbackToSavepoint(tx, 'import_batch');
  }
  const created = new Set<string>();
  const refused: { item: T; error: string }[] = [];
  for (const item of items) {
    await savepoint(tx, 'import_row');
    try {
      for (const key of await insert([item])) created.add(key);
      await releaseSavepoint(tx, 'import_row');
    } catch (error) {
      if (!isRowError(error)) throw error;
      await rollbackToSavepoint(tx, 'import_row');
      refused.push({ item, error: `refused by the database: ${error.message}` });
    }
  }
  return { created, refused };
}

/** After a section that created rows: the tables it grew, analyzed (see refreshStatistics). */
export async function analyzeSection(tx: Tx, section: 'plans' | 'customers' | 'subscriptions'): Promise<void> {
  await refreshStatistics(tx, section === 'plans' ? ['plans', 'prices'] : [section]);
}

export async function importPlans(ctx: Ctx, batch: Valid<PlanRecord>[], dryRun: boolean): Promise<BatchResult> {
  if (dryRun) {
    const existing = new Set(
      (
        await findPlansByCodes(
          ctx.tx,
          ctx.tenantId,
          batch.map((b) => b.key),
        )
      ).map((p) => p.code),
    );
    const skipped = batch.filter((b) => existing.has(b.key)).length;
    return { created: batch.length - skipped, skipped, failed: [], failedKeys: [] };
  }
  const rows = new Map(batch.map((b) => [b.key, toPlanRows(ctx, b.record)]));
  const { created, refused } = await insertEach(ctx.tx, batch, (items) =>
    insertNewPlans(
      ctx.tx,
      items.map((b) => rows.get(b.key)!.plan),
      items.map((b) => rows.get(b.key)!.price),
    ),
  );
  return {
    created: created.size,
    skipped: batch.length - created.size - refused.length,
    failed: refused.map((r) => failure('plan', r.item, r.error)),
    failedKeys: refused.map((r) => r.item.key),
  };
}

export async function importCustomers(ctx: Ctx, batch: Valid<CustomerRecord>[], dryRun: boolean): Promise<BatchResult> {
  if (dryRun) {
    const existing = await findCustomersByEmails(
      ctx.tx,
      ctx.tenantId,
      batch.map((b) => b.key.toLowerCase()),
    );
    return { created: batch.length - existing.length, skipped: existing.length, failed: [], failedKeys: [] };
  }
  const rows = new Map(batch.map((b) => [b.key, toCustomerRow(ctx, b.record)]));
  const { created, refused } = await insertEach(ctx.tx, batch, (items) =>
    insertNewCustomers(
      ctx.tx,
      items.map((b) => rows.get(b.key)!),
    ),
  );
  return {
    created: created.size,
    skipped: batch.length - created.size - refused.length,
    failed: refused.map((r) => failure('customer', r.item, r.error)),
    failedKeys: refused.map((r) => r.item.key),
  };
}

/** What the file itself says about a key of another section (for references in subscriptions). */
export type FileKey = { line?: number; index: number; ok: boolean; plan?: Omit<PlanRef, 'id'> };

export type SubscriptionReferences = {
  /** Plans looked up so far by code (null: not in Kosh). Plans are all imported before subscriptions. */
  plans: Map<string, PlanRef | null>;
  filePlans: Map<string, FileKey>;
  /** Lower-cased e-mail → the customer rows of the file. */
  fileCustomers: Map<string, FileKey>;
  baseCurrency: string;
};

function where(entry: FileKey): string {
  return entry.line !== undefined ? `line ${entry.line}` : `index ${entry.index}`;
}

/** The price a subscription is billed at: the plan's only price, or its price in the tenant's base currency. */
function pickPrice(plan: Pick<PlanRef, 'prices'>, baseCurrency: string): { id?: string; currency: string } | string {
  if (plan.prices.length === 1) return plan.prices[0]!;
  const base = plan.prices.find((p) => p.currency === baseCurrency);
  if (base) return base;
  return plan.prices.length === 0
    ? 'plan_code: the plan has no price'
    : `plan_code: the plan has prices in ${plan.prices.map((p) => p.currency).join(', ')} and none in the tenant's base currency ${baseCurrency}`;
}

/** A dry run's stand-in for the id of a customer the file would create. */
const IN_THIS_FILE = '(in this file)';

export async function importSubscriptions(ctx: Ctx, batch: Valid<SubscriptionRecord>[], refs: SubscriptionReferences, dryRun: boolean): Promise<BatchResult> {
  // What is already there is skipped as it is, whatever the file now says it refers to.
  const existing = new Set(
    await existingSubscriptionExternalIds(
      ctx.tx,
      ctx.tenantId,
      batch.map((b) => b.key),
    ),
  );
  const fresh = batch.filter((b) => !existing.has(b.key));
  const unknownCodes = [...new Set(fresh.map((b) => b.record.plan_code).filter((code) => !refs.plans.has(code)))];
  if (unknownCodes.length) {
    const found = new Map((await findPlansByCodes(ctx.tx, ctx.tenantId, unknownCodes)).map((p) => [p.code, p]));
    for (const code of unknownCodes) refs.plans.set(code, found.get(code) ?? null);
  }
  const emails = [...new Set(fresh.map((b) => b.record.customer_email.toLowerCase()))];
  const customers = new Map((await findCustomersByEmails(ctx.tx, ctx.tenantId, emails)).map((c) => [c.email.toLowerCase(), c.id]));

  const failed: FailedRow[] = [];
  const ready: (Valid<SubscriptionRecord> & { customerId: string; plan: PlanRef; currency: string; priceId?: string })[] = [];
  for (const row of fresh) {
    const { plan_code: code, customer_email: email } = row.record;
    const problems: string[] = [];

    let plan: PlanRef | Omit<PlanRef, 'id'> | null = refs.plans.get(code) ?? null;
    const filePlan = refs.filePlans.get(code);
    if (!plan && dryRun && filePlan?.ok) plan = filePlan.plan!;
    if (!plan) {
      problems.push(
        filePlan ? `plan_code: plan '${code}' was not imported (its row, ${where(filePlan)}, failed)` : `plan_code: no plan '${code}' in this file or in Kosh`,
      );
    }
    let customerId = customers.get(email.toLowerCase()) ?? null;
    const fileCustomer = refs.fileCustomers.get(email.toLowerCase());
    if (!customerId && dryRun && fileCustomer?.ok) customerId = IN_THIS_FILE;
    if (!customerId) {
      problems.push(
        fileCustomer
          ? `customer_email: customer '${email}' was not imported (its row, ${where(fileCustomer)}, failed)`
          : `customer_email: no customer '${email}' in this file or in Kosh`,
      );
    }
    const price = plan ? pickPrice(plan, refs.baseCurrency) : null;
    if (typeof price === 'string') problems.push(price);
    if (problems.length) {
      failed.push(failure('subscription', row, problems.join('; ')));
      continue;
    }
    ready.push({
      ...row,
      customerId: customerId!,
      plan: plan as PlanRef,
      currency: (price as { currency: string }).currency,
      priceId: (price as { id?: string }).id,
    });
  }

  const doubled = await doubleMetering(ctx, ready, dryRun);
  for (const row of ready) {
    const problem = doubled.get(row.key);
    if (problem) failed.push(failure('subscription', row, problem));
  }
  const going = ready.filter((r) => !doubled.has(r.key));

  if (dryRun) return { created: going.length, skipped: existing.size, failed, failedKeys: [] };
  const rows = new Map(going.map((r) => [r.key, toSubscriptionRow(ctx, r.record, r)]));
  const { created, refused } = await insertEach(ctx.tx, going, (items) =>
    insertNewSubscriptions(
      ctx.tx,
      items.map((r) => rows.get(r.key)!),
    ),
  );
  failed.push(...refused.map((r) => failure('subscription', r.item, r.error)));
  // A concurrent import may have created some since the check: ON CONFLICT skipped those too.
  return { created: created.size, skipped: existing.size + going.length - created.size - refused.length, failed, failedKeys: [] };
}

/**
 * One metric is metered once per customer (decision 0190), for imported subscriptions as for
 * created ones: a running row whose plan meters, in its currency, a metric that a running
 * subscription of the same customer already meters — in Kosh, or an earlier row of the file — is
 * refused with the reason; the others go in. The customers' metering lock (the one subscription
 * creation takes) is held to the end of the batch's transaction.
 */
async function doubleMetering(
  ctx: Ctx,
  ready: (Valid<SubscriptionRecord> & { customerId: string; plan: PlanRef; currency: string })[],
  dryRun: boolean,
): Promise<Map<string, string>> {
  const refusedRows = new Map<string, string>();
  const isRunning = (status: string) => (RUNNING_STATUSES as readonly string[]).includes(status);
  const running = ready.filter((r) => isRunning(r.record.status) && r.plan.id);
  const metered = await pricesOfPlans(ctx.tx, ctx.tenantId, [...new Set(running.map((r) => r.plan.id))], { scope: 'metered', activeOnly: true });
  if (metered.length === 0) return refusedRows;
  const metricsOf = (planId: string, currency: string) => metered.filter((p) => p.plan_id === planId && p.currency === currency).map((p) => p.metric_code!);
  const metering = running.filter((r) => metricsOf(r.plan.id, r.currency).length > 0);
  // A dry run's customer that only the file holds has nothing in Kosh yet.
  const known = [...new Set(metering.map((r) => r.customerId).filter((id) => id !== IN_THIS_FILE))];
  if (!dryRun) await lockCustomersMetering(ctx, known);
  const theirs = await runningSubscriptionsOfCustomers(ctx.tx, ctx.tenantId, known);
  const seen = new Set(metered.map((p) => p.plan_id));
  const more = [...new Set(theirs.map((s) => s.plan_id))].filter((id) => !seen.has(id));
  metered.push(...(await pricesOfPlans(ctx.tx, ctx.tenantId, more, { scope: 'metered', activeOnly: true })));
  const taken = new Map<string, string>(); // customer + metric → who meters it
  for (const sub of theirs) {
    for (const metric of metricsOf(sub.plan_id, sub.currency)) taken.set(`${sub.customer_id} ${metric}`, `the customer's subscription ${sub.id}`);
  }
  for (const row of metering) {
    const customer = row.customerId === IN_THIS_FILE ? `file:${row.record.customer_email.toLowerCase()}` : row.customerId;
    const metrics = metricsOf(row.plan.id, row.currency);
    const clash = metrics.find((metric) => taken.has(`${customer} ${metric}`));
    if (clash) {
      refusedRows.set(row.key, `plan_code: ${taken.get(`${customer} ${clash}`)} already meters ${clash}; a metric is billed by one subscription per customer`);
      continue;
    }
    for (const metric of metrics) taken.set(`${customer} ${metric}`, `subscription '${row.key}' of this file`);
  }
  return refusedRows;
}
