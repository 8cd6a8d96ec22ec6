import type { Ctx } from '../../platform/context.js';
import { emitEvent, emitEvents } from '../../platform/events/events.js';
import { subscriptionDiscounts, type DiscountInForce } from '../../modules/coupons/index.js';
import { findCustomers, type Customer } from '../../modules/customers/index.js';
import {
  markPendingChargesInvoiced,
  pendingChargeLine,
  takePendingCharges,
  type DraftInvoiceInput,
  type DraftLine,
  type PendingChargeRow,
} from '../../modules/invoices/index.js';
import { findPlan, pricesOfPlans, type PlanRow, type PriceRow } from '../../modules/plans/index.js';
import {
  advanceSubscriptionPeriods,
  periodAfter,
  toSubscription,
  transitionSubscription,
  type PeriodAdvance,
  type SubscriptionRow,
} from '../../modules/subscriptions/index.js';
import { commitmentTrueUps } from './commitment-true-up.js';
import { computeRenewalLines, type RenewalSubject } from './compute-renewal-lines.js';
import { childLine, discountSubscriptionLines } from './invoice-subscription-period.js';
import { itemChargesOf } from './subscription-item-charges.js';
import { issueInvoicesWithCredit } from '../invoices/finalize-invoice.js';

export type RenewalOutcome = {
  renewed: SubscriptionRow[];
  trialsEnded: SubscriptionRow[];
  ended: SubscriptionRow[];
};

/** Plans, prices and customers of a batch, read once per batch rather than once per renewal. */
async function loadBatchContext(ctx: Ctx, rows: SubscriptionRow[]) {
  const planIds = [...new Set(rows.map((r) => r.plan_id))];
  const plans = new Map<string, PlanRow>();
  for (const id of planIds) {
    const plan = await findPlan(ctx.tx, ctx.tenantId, id);
    if (plan) plans.set(id, plan);
  }
  // By id (what a subscription references) and, for one stored before it did, its plan's active price per currency.
  const prices = new Map<string, PriceRow>();
  for (const p of await pricesOfPlans(ctx.tx, ctx.tenantId, planIds)) {
    prices.set(p.id, p);
    if (p.active) prices.set(`${p.plan_id}/${p.currency}`, p);
  }
  const metered = new Map<string, PriceRow[]>();
  for (const p of await pricesOfPlans(ctx.tx, ctx.tenantId, planIds, { scope: 'metered', activeOnly: true })) {
    const key = `${p.plan_id}/${p.currency}`;
    metered.set(key, [...(metered.get(key) ?? []), p]);
  }
  const customers = new Map<string, Customer>();
  for (const c of await findCustomers(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.customer_id),
  ))
    customers.set(c.id, c);
  // The parents the children billed to a parent are invoiced to (decision 0550).
  const parentIds = [...customers.values()].filter((c) => c.bill_to === 'parent' && c.parent_customer_id && !customers.has(c.parent_customer_id));
  for (const c of await findCustomers(
    ctx.tx,
    ctx.tenantId,
    parentIds.map((c) => c.parent_customer_id!),
  ))
    customers.set(c.id, c);
  return { plans, prices, metered, customers };
}

/**
 * Renews subscriptions whose period is over, claimed (and locked) by the caller in this
 * transaction: cancel_at_period_end → canceled at the period's end, with a final invoice for the
 * ended period's usage when there is any (billing_reason subscription_final; decision 0190);
 * otherwise the ended period's usage (arrears) and the next period's fixed fee (advance:
 * subscription_cycle) are invoiced and the subscription moves to the next period — a trial ending
 * becomes active. When nothing is due (a pure usage plan with no usage) no invoice is issued. All
 * of it, with the events, commits together; a failure rolls the whole batch back (numbers included).
 *
 * The invoices of a batch are issued together (issueInvoicesWithCredit: the GST, numbers, ledger
 * entries and events of issueInvoices, in a few statements, then any customer credit applied —
 * only for the customers who hold some).
 */
export async function renewSubscriptions(ctx: Ctx, batch: SubscriptionRow[]): Promise<RenewalOutcome> {
  const outcome: RenewalOutcome = { renewed: [], trialsEnded: [], ended: [] };
  if (batch.length === 0) return outcome;
  // Numbers are taken in this order: by period end, then by id (creation order), whatever order the claim's index scan gave.
  const claimed = [...batch].sort((x, y) => x.current_period_end.getTime() - y.current_period_end.getTime() || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const { plans, prices, metered, customers } = await loadBatchContext(ctx, claimed);
  const payers = payersOf(customers);
  const items = await itemChargesOf(
    ctx,
    claimed.map((r) => r.id),
  );
  const subjects: RenewalSubject[] = [];
  const nextPeriods: (ReturnType<typeof periodAfter> | null)[] = [];
  for (const row of claimed) {
    if (row.current_period_end > ctx.now) throw new Error(`subscription ${row.id} is not due until ${row.current_period_end.toISOString()}`);
    const plan = plans.get(row.plan_id);
    const price = (row.price_id ? prices.get(row.price_id) : undefined) ?? prices.get(`${row.plan_id}/${row.currency}`) ?? null;
    const meteredPrices = metered.get(`${row.plan_id}/${row.currency}`) ?? [];
    const customer = customers.get(row.customer_id);
    const ending = row.cancel_at_period_end;
    if (!plan || !customer || (!ending && !price && meteredPrices.length === 0)) {
      throw new Error(`subscription ${row.id}: its plan has no price in ${row.currency}, or its plan or customer is gone`);
    }
    const next = ending ? null : periodAfter(row);
    nextPeriods.push(next);
    subjects.push({
      subscription: row,
      plan,
      fixedPrice: price,
      meteredPrices,
      items: items.get(row.id) ?? [],
      customer,
      // Usage during a trial is not billed: the trial is free.
      usagePeriod: row.status === 'trialing' ? null : { start: row.current_period_start, end: row.current_period_end },
      // Ending: no next period, only the final usage.
      nextPeriod: next,
    });
  }
  // One grouped usage query for the batch; the lines in arrears then the fee in advance.
  const computed = await computeRenewalLines(ctx, subjects);
  const discounts = await subscriptionDiscounts(
    ctx,
    claimed.map((r) => r.id),
  );
  const { inputs, discountsApplied, chargesTaken, invoiced } = await renewalInvoiceInputs(ctx, claimed, subjects, computed, discounts, payers);
  const invoices = await issueInvoicesWithCredit(ctx, inputs, discountsApplied);
  await markPendingChargesInvoiced(
    ctx,
    invoices.map((invoice, k) => ({ invoiceId: invoice.id, charges: chargesTaken[k]! })),
  );
  const invoiceOf = new Map(invoiced.flatMap((subjectIndices, k) => subjectIndices.map((subjectIndex) => [subjectIndex, invoices[k]!.id] as const)));

  const renewing: { row: SubscriptionRow; period: ReturnType<typeof periodAfter>; invoiceId: string | null }[] = [];
  for (const [i, row] of claimed.entries()) {
    const period = nextPeriods[i];
    if (period) {
      renewing.push({ row, period, invoiceId: invoiceOf.get(i) ?? null });
      continue;
    }
    const final = invoiceOf.get(i);
    const ended = await transitionSubscription(ctx.tx, ctx.tenantId, row.id, 'expire', {
      ended_at: row.current_period_end,
      updated_at: ctx.now,
      ...(final ? { latest_invoice_id: final } : {}),
    });
    outcome.ended.push(ended);
    await emitEvent(ctx, 'subscription.canceled', toSubscription(ended));
  }
  const advances: PeriodAdvance[] = renewing.map(({ row, period, invoiceId }) => ({
    id: row.id,
    fromPeriodEnd: row.current_period_end,
    billingAnchor: row.billing_anchor,
    periodIndex: period.index,
    periodStart: period.start,
    periodEnd: period.end,
    latestInvoiceId: invoiceId,
  }));
  const wasTrialing = new Set(renewing.filter(({ row }) => row.status === 'trialing').map(({ row }) => row.id));
  const moved = await advanceSubscriptionPeriods(ctx.tx, ctx.tenantId, advances, ctx.now);
  for (const row of moved) (wasTrialing.has(row.id) ? outcome.trialsEnded : outcome.renewed).push(row);
  await emitEvents(ctx, [
    ...outcome.trialsEnded.map((row) => ({ type: 'subscription.trial_ended' as const, object: toSubscription(row) })),
    ...outcome.renewed.map((row) => ({ type: 'subscription.renewed' as const, object: toSubscription(row) })),
  ]);
  return outcome;
}

/**
 * Who pays each customer's renewals: the parent for a child billed to it (bill_to 'parent';
 * decision 0550), the customer itself otherwise. The direct parent only: a parent that is itself
 * billed to its own parent does not pass its children's charges further up.
 */
function payersOf(customers: Map<string, Customer>): Map<string, Customer> {
  const payers = new Map<string, Customer>();
  for (const c of customers.values()) {
    const parent = c.bill_to === 'parent' && c.parent_customer_id ? customers.get(c.parent_customer_id) : undefined;
    if (c.bill_to === 'parent' && !parent) throw new Error(`customer ${c.id}: the parent it is billed to is gone`);
    payers.set(c.id, parent ?? c);
  }
  return payers;
}

type RenewalInvoice = { input: DraftInvoiceInput; applied: { inForce: DiscountInForce; amount: number }[]; charges: PendingChargeRow[]; subjects: number[] };

/**
 * The renewal invoices to issue, one per subject with something due: its lines (discounted) then
 * the pending one-off charges it takes (DESIGN §24): the subscription's own, and the customer's on
 * the customer's first invoice of the batch in their currency. The subjects of children billed to
 * a parent go instead on one consolidated invoice to the parent per (currency, billing reason,
 * period, collection method): the parent's GSTIN and state decide the GST, and each line names
 * the child and its subscription (decision 0550).
 */
async function renewalInvoiceInputs(
  ctx: Ctx,
  claimed: SubscriptionRow[],
  subjects: RenewalSubject[],
  computed: DraftLine[][],
  discounts: Map<string, DiscountInForce>,
  payers: Map<string, Customer>,
) {
  const charges = await takePendingCharges(
    ctx,
    claimed.map((row) => ({ customerId: row.customer_id, currency: row.currency, subscriptionId: row.id })),
  );
  const periods = subjects.map(
    (subject, i) => subject.nextPeriod ?? subject.usagePeriod ?? { start: claimed[i]!.current_period_start, end: claimed[i]!.current_period_end },
  );
  // The discount in force (coupons) comes off the subscription's lines before GST, usage lines included.
  const discounted = subjects.map((_, i) => discountSubscriptionLines(computed[i]!, discounts.get(claimed[i]!.id), periods[i]!.start, claimed[i]!.currency));
  // The ended period's minimum commitment (decision 0540): a true-up line after the discounted lines.
  const trueUps = await commitmentTrueUps(
    ctx,
    subjects.flatMap((subject, i) =>
      subject.usagePeriod
        ? [{ ...subject, subscription: claimed[i]!, period: subject.usagePeriod, until: subject.usagePeriod.end, lines: discounted[i]!.lines }]
        : [],
    ),
  );
  const trueUpOf = new Map<number, DraftLine>();
  let k = 0;
  for (const [i, subject] of subjects.entries())
    if (subject.usagePeriod) {
      const line = trueUps[k++];
      if (line) trueUpOf.set(i, line);
    }
  const invoices: RenewalInvoice[] = [];
  const consolidated = new Map<string, RenewalInvoice>();
  for (const [i, subject] of subjects.entries()) {
    const trueUp = trueUpOf.get(i);
    // Nothing due (no usage on an ending or pure usage subscription, no true-up, no pending charge): no invoice.
    if (computed[i]!.length === 0 && !trueUp && charges[i]!.length === 0) continue;
    const row = claimed[i]!;
    const period = periods[i]!;
    const applied = discounted[i]!.applied;
    // One-off charges follow, undiscounted, each taxed by its own HSN/SAC.
    const lines = [...discounted[i]!.lines, ...(trueUp ? [trueUp] : []), ...charges[i]!.map(pendingChargeLine)];
    const billingReason = subject.nextPeriod ? 'subscription_cycle' : 'subscription_final';
    const payer = payers.get(subject.customer.id) ?? subject.customer;
    if (payer.id === subject.customer.id) {
      invoices.push({
        input: {
          customer: subject.customer,
          currency: row.currency,
          lines,
          subscriptionId: row.id,
          billingReason,
          periodStart: period.start,
          periodEnd: period.end,
          collectionMethod: row.collection_method,
        },
        applied,
        charges: charges[i]!,
        subjects: [i],
      });
      continue;
    }
    const key = [payer.id, row.currency, billingReason, period.start.toISOString(), period.end.toISOString(), row.collection_method].join('|');
    let invoice = consolidated.get(key);
    if (!invoice) {
      invoice = {
        input: {
          customer: payer,
          currency: row.currency,
          lines: [],
          subscriptionId: null,
          billingReason,
          periodStart: period.start,
          periodEnd: period.end,
          collectionMethod: row.collection_method,
          metadata: { consolidated: true },
        },
        applied: [],
        charges: [],
        subjects: [],
      };
      consolidated.set(key, invoice);
      invoices.push(invoice);
    }
    invoice.input.lines.push(...lines.map((line) => childLine(line, subject.customer, row.id)));
    // One row per discount on an invoice: a customer-wide discount taken by two of a child's subscriptions adds up.
    for (const a of applied) {
      const same = invoice.applied.find((b) => b.inForce.discount.id === a.inForce.discount.id);
      if (same) same.amount += a.amount;
      else invoice.applied.push({ ...a });
    }
    invoice.charges.push(...charges[i]!);
    invoice.subjects.push(i);
  }
  return {
    inputs: invoices.map((v) => v.input),
    discountsApplied: invoices.map((v) => v.applied),
    chargesTaken: invoices.map((v) => v.charges),
    invoiced: invoices.map((v) => v.subjects),
  };
}
