import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { convertMinorUnits } from '../../platform/money.js';
import { adjustPrepayment, prepaymentsOfGrant, receivePrepayment } from '../advances/index.js';
import { getCustomer } from '../customers/index.js';
import { findEntity, findPrimaryEntity, type EntityRow } from '../entities/index.js';
import { applyToInvoice, CREDIT_TOP_UP_REASON, getInvoiceRow, linesOfInvoices, type InvoiceLineRow, type InvoiceRow } from '../invoices/index.js';
import { Account, postEntry } from '../ledger/index.js';
import { findPrice } from '../plans/index.js';
import { allocatePromotional, drawOrder, grantAppliesTo, paidDrawFor, type LineForDraw, type PriceType } from './credits.allocation.js';
import {
  drawFromGrant,
  findCreditGrant,
  findGrantOfInvoice,
  insertCreditGrant,
  insertMovements,
  listGrantsOfCustomer,
  lockSpendableGrants,
  movementsOfCustomer,
  customersWithGrants,
  paidBalancesOf,
  paymentMethodsOfTopUps,
  upsertAutoTopUp,
  findAutoTopUp,
  enabledAutoTopUps,
  claimAutoTopUp,
  setInFlightInvoice,
  type AutoTopUpRow,
  type CreditGrantRow,
} from './credits.repository.js';
import type { CreateCreditGrantBody, CreditGrant } from './credits.schemas.js';
import { transitionCreditGrant } from './credits.states.js';
import type { CreditMovementKind } from './credits.tables.js';

export function toCreditGrant(row: CreditGrantRow): CreditGrant {
  return {
    id: row.id,
    customer_id: row.customer_id,
    entity_id: row.entity_id,
    category: row.category,
    status: row.status,
    name: row.name,
    currency: row.currency,
    amount: row.amount,
    remaining: row.remaining,
    tax_amount: row.cgst_amount + row.sgst_amount + row.igst_amount,
    priority: row.priority,
    expires_at: toIsoOrNull(row.expires_at),
    applies_to: row.applies_to,
    invoice_id: row.invoice_id,
    voided_at: toIsoOrNull(row.voided_at),
    expired_at: toIsoOrNull(row.expired_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

async function entityOf(ctx: Ctx, id: string): Promise<EntityRow> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, id);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

function checkExpiry(ctx: Ctx, body: CreateCreditGrantBody): Date | null {
  if (!body.expires_at) return null;
  const at = new Date(body.expires_at);
  if (at <= ctx.now) throw errors.invalidField('expires_at', 'must be in the future');
  return at;
}

async function movement(ctx: Ctx, grant: CreditGrantRow, kind: CreditMovementKind, amount: number, extra: { invoiceId?: string; tax?: number } = {}) {
  await insertMovements(ctx.tx, [
    {
      tenant_id: ctx.tenantId,
      id: newId(),
      grant_id: grant.id,
      customer_id: grant.customer_id,
      kind,
      amount,
      tax_amount: extra.tax ?? 0,
      invoice_id: extra.invoiceId ?? null,
      created_at: ctx.now,
    },
  ]);
}

/**
 * A promotional grant: spendable at once, a discount taken off invoice lines before GST when drawn.
 * No journal entry: it is not money anybody owes (never a liability); its draw-downs show as
 * the discount of the invoices that take them (a lower taxable value, so lower revenue and GST).
 */
export async function createPromotionalGrant(ctx: Ctx, customerId: string, body: CreateCreditGrantBody): Promise<CreditGrantRow> {
  const customer = await getCustomer(ctx, customerId);
  const expiresAt = checkExpiry(ctx, body);
  const entity = await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!entity) throw errors.notFound('entity');
  const row = await insertCreditGrant(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: customer.id,
    entity_id: entity.id,
    category: 'promotional',
    status: 'active',
    name: body.name ?? null,
    currency: body.currency,
    amount: body.amount,
    remaining: body.amount,
    priority: body.priority,
    expires_at: expiresAt,
    applies_to: body.applies_to ? JSON.stringify(body.applies_to) : null,
    invoice_id: null,
    voided_at: null,
    expired_at: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  await movement(ctx, row, 'granted', row.amount);
  await emitEvent(ctx, 'credit_grant.created', toCreditGrant(row));
  return row;
}

/**
 * A paid grant, sold by `invoice` (its top-up, finalized by the caller): pending until that
 * invoice is paid. The invoice's finalization entry is the grant's entry — it credits the whole
 * top-up (credit and the GST the advance will carry) to prepaid credit (2330), not revenue — and
 * the grant remembers the split asked for (`tax`, decision 0700); the receipt voucher issued at
 * payment charges that GST and takes it out of 2330 (activateGrantOfInvoice).
 */
export async function insertPaidGrant(
  ctx: Ctx,
  body: CreateCreditGrantBody,
  invoice: InvoiceRow,
  options: { paymentMethodId?: string | null; tax: { subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number } },
): Promise<CreditGrantRow> {
  const expiresAt = checkExpiry(ctx, body);
  const row = await insertCreditGrant(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: invoice.customer_id,
    entity_id: invoice.entity_id,
    category: 'paid',
    status: 'pending',
    name: body.name ?? null,
    currency: invoice.currency,
    amount: options.tax.subtotal,
    remaining: options.tax.subtotal,
    cgst_amount: options.tax.cgst_amount,
    sgst_amount: options.tax.sgst_amount,
    igst_amount: options.tax.igst_amount,
    priority: body.priority,
    expires_at: expiresAt,
    applies_to: body.applies_to ? JSON.stringify(body.applies_to) : null,
    invoice_id: invoice.id,
    payment_method_id: options.paymentMethodId ?? null,
    voided_at: null,
    expired_at: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'credit_grant.created', toCreditGrant(row));
  return row;
}

/**
 * The payment method each of these top-up invoices must be charged to — the one its auto top-up
 * named — by invoice id. Invoices absent from the answer are charged as any other (the default
 * method); one present is charged to that method or not at all.
 */
export async function topUpPaymentMethods(ctx: Ctx, invoiceIds: string[]): Promise<Map<string, string>> {
  const rows = await paymentMethodsOfTopUps(ctx.tx, ctx.tenantId, invoiceIds);
  return new Map(rows.map((r) => [r.invoice_id, r.payment_method_id]));
}

/**
 * A payment received against a top-up (a listener on payment.recorded and invoice.paid, in the
 * paying transaction): money received for services not yet supplied is an advance, taxed "to the
 * extent it is covered by the payment" on the day it is received (CGST Act s.13(2)(a) and its
 * Explanation (i)). So every part received gets its receipt voucher now (CGST Rules, rule 50;
 * GSTR-1 table 11A; decisions 0700 and 0840) and its GST moves out of the prepaid liability into
 * output tax (issueTopUpVoucher). What is received is what the top-up no longer asks
 * (total − amount_due): the part not yet covered by a voucher gets one, so a replay or a second
 * listener issues nothing. The grant stays pending until the top-up is paid in full.
 */
export async function receiveTopUpPayments(ctx: Ctx, invoiceId: string): Promise<void> {
  const grant = await findGrantOfInvoice(ctx.tx, ctx.tenantId, invoiceId);
  if (!grant || grant.status !== 'pending') return;
  const invoice = await getInvoiceRow(ctx, invoiceId);
  if (invoice.status === 'void' || invoice.status === 'draft') return;
  const received = invoice.total - invoice.amount_due;
  const vouchered = (await prepaymentsOfGrant(ctx, grant.id)).amount;
  if (received > vouchered) await issueTopUpVoucher(ctx, grant, invoice, { before: vouchered, after: received });
}

/**
 * pending → active when the top-up invoice is paid in full (a listener on invoice.paid): the
 * credit is granted on full payment, as Stripe and Orb grant a paid credit block when its invoice
 * is paid (decision 0840). The last part received gets its voucher first; the grant's amount and
 * tax are then what its vouchers add up to (the split the top-up asked for, unless a rate or state
 * changed before a part was received). 2330 then holds the credit's value, which the grant's
 * draw-downs and expiry take out.
 */
export async function activateGrantOfInvoice(ctx: Ctx, invoiceId: string): Promise<CreditGrantRow | null> {
  const grant = await findGrantOfInvoice(ctx.tx, ctx.tenantId, invoiceId);
  if (!grant || grant.status !== 'pending') return null;
  await receiveTopUpPayments(ctx, invoiceId);
  const vouchers = await prepaymentsOfGrant(ctx, grant.id);
  const row = await transitionCreditGrant(ctx.tx, ctx.tenantId, grant.id, 'activate', {
    updated_at: ctx.now,
    amount: vouchers.subtotal,
    remaining: vouchers.subtotal,
    cgst_amount: vouchers.cgst_amount,
    sgst_amount: vouchers.sgst_amount,
    igst_amount: vouchers.igst_amount,
  });
  await movement(ctx, row, 'granted', row.amount);
  await emitEvent(ctx, 'credit_grant.activated', toCreditGrant(row));
  return row;
}

/**
 * The receipt voucher of one part received against a top-up and the entry that books its GST out
 * of 2330: `credit_grant.tax_on_receipt` Dr 2330 / Cr 2100+2110 or 2120 (tagged with the top-up).
 * A foreign-currency top-up's output tax is booked at the voucher's rupee values (the rate of the
 * date of receipt, rule 34), while 2330 — the customer's payment for services to come, carried at
 * the top-up's own rate — gives up the tax at that rate; the difference is a realized exchange gain
 * or loss (decision 0840).
 */
async function issueTopUpVoucher(ctx: Ctx, grant: CreditGrantRow, invoice: InvoiceRow, received: { before: number; after: number }) {
  const customer = await getCustomer(ctx, grant.customer_id);
  const [line] = await linesOfInvoices(ctx.tx, ctx.tenantId, [invoice.id]);
  const { advance, tax, inr } = await receivePrepayment(ctx, {
    grantId: grant.id,
    entityId: invoice.entity_id,
    customer,
    currency: invoice.currency,
    gross: invoice.total,
    received,
    hsnCode: line?.hsn_code,
    topUpRate: invoice.exchange_rate,
    asked: { subtotal: grant.amount, cgst_amount: grant.cgst_amount, sgst_amount: grant.sgst_amount, igst_amount: grant.igst_amount },
  });
  if (tax.tax_amount <= 0) return;
  const entity = await entityOf(ctx, invoice.entity_id);
  const inINR = entity.functional_currency === 'INR';
  const fx = (inrAmount: number | undefined) => (inrAmount !== undefined && inINR ? { functional: inrAmount } : {});
  const sameRate = advance.exchange_rate !== null && invoice.exchange_rate !== null && Number(advance.exchange_rate) === Number(invoice.exchange_rate);
  const liabilityAtTopUpRate =
    !inr || !inINR
      ? {}
      : sameRate || !invoice.exchange_rate
        ? fx(inr.inr_amount - inr.inr_subtotal)
        : fx(convertMinorUnits(tax.tax_amount, invoice.currency, 'INR', invoice.exchange_rate));
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'credit_grant.tax_on_receipt',
    referenceType: 'advance',
    referenceId: advance.id,
    currency: invoice.currency,
    description: `GST on prepaid credit ${grant.name ?? grant.id}, receipt voucher ${advance.receipt_voucher_number}`,
    exchangeDifference: 'realized',
    lines: [
      { account: Account.PREPAID_CREDIT, debit: tax.tax_amount, customerId: grant.customer_id, invoiceId: invoice.id, ...liabilityAtTopUpRate },
      { account: Account.CGST_PAYABLE, credit: tax.cgst_amount, invoiceId: invoice.id, ...fx(inr?.inr_cgst_amount) },
      { account: Account.SGST_PAYABLE, credit: tax.sgst_amount, invoiceId: invoice.id, ...fx(inr?.inr_sgst_amount) },
      { account: Account.IGST_PAYABLE, credit: tax.igst_amount, invoiceId: invoice.id, ...fx(inr?.inr_igst_amount) },
    ],
  });
}

/** pending → voided when the unpaid top-up invoice is voided: the invoice's void entry reverses 2330. */
export async function voidGrantOfInvoice(ctx: Ctx, invoiceId: string): Promise<CreditGrantRow | null> {
  const grant = await findGrantOfInvoice(ctx.tx, ctx.tenantId, invoiceId);
  if (!grant || grant.status !== 'pending') return null;
  const row = await transitionCreditGrant(ctx.tx, ctx.tenantId, grant.id, 'void', { remaining: 0, voided_at: ctx.now, updated_at: ctx.now });
  await movement(ctx, row, 'voided', grant.remaining);
  await emitEvent(ctx, 'credit_grant.voided', toCreditGrant(row));
  return row;
}

/**
 * Voids a promotional grant's unspent balance (no entry: it was never a liability). A paid grant
 * is the customer's money: while its top-up is unpaid, voiding it voids that invoice (the flow
 * does, see voidCreditGrantWithInvoice); once paid it is refused.
 */
export async function voidPromotionalGrant(ctx: Ctx, grant: CreditGrantRow): Promise<CreditGrantRow> {
  if (grant.category !== 'promotional') throw new Error('voidPromotionalGrant: a paid grant');
  const row = await transitionCreditGrant(ctx.tx, ctx.tenantId, grant.id, 'void', { remaining: 0, voided_at: ctx.now, updated_at: ctx.now });
  if (grant.remaining > 0) await movement(ctx, row, 'voided', grant.remaining);
  await emitEvent(ctx, 'credit_grant.voided', toCreditGrant(row));
  return row;
}

export async function getCreditGrantRow(ctx: ReadCtx, id: string): Promise<CreditGrantRow> {
  const row = await findCreditGrant(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('credit grant');
  return row;
}

/**
 * At expires_at the unspent balance lapses. A paid grant's is forfeited to income: Dr prepaid
 * credit 2330 / Cr expired-credit income 4100. Its GST was due when the top-up was invoiced
 * (CGST Act s.13(2)) and stays paid; the forfeiture is not a new supply (CBIC circular
 * 178/10/2022-GST), so no tax is posted (docs/ledger.md). A promotional grant just lapses.
 */
export async function expireCreditGrant(ctx: Ctx, id: string): Promise<CreditGrantRow | null> {
  const current = await findCreditGrant(ctx.tx, ctx.tenantId, id);
  if (!current || current.status !== 'active' || !current.expires_at || current.expires_at > ctx.now) return null;
  const row = await transitionCreditGrant(ctx.tx, ctx.tenantId, id, 'expire', {
    remaining: 0,
    expired_at: ctx.now,
    updated_at: ctx.now,
  });
  if (current.remaining > 0) {
    await movement(ctx, row, 'expired', current.remaining);
    if (current.category === 'paid') {
      const entity = await entityOf(ctx, current.entity_id);
      await postEntry(ctx, {
        ledgerId: entity.tb_ledger_id,
        entityId: entity.id,
        kind: 'credit_grant.expired',
        referenceType: 'credit_grant',
        referenceId: row.id,
        currency: row.currency,
        description: `Expiry of prepaid credit ${row.name ?? row.id}`,
        lines: [
          { account: Account.PREPAID_CREDIT, debit: current.remaining, customerId: row.customer_id, invoiceId: row.invoice_id },
          { account: Account.EXPIRED_CREDIT_INCOME, credit: current.remaining },
        ],
      });
    }
  }
  await emitEvent(ctx, 'credit_grant.expired', { ...toCreditGrant(row), expired_balance: current.remaining });
  return row;
}

export async function listCreditGrants(
  ctx: ReadCtx,
  customerId: string,
): Promise<{ grants: CreditGrantRow[]; balances: { currency: string; paid: number; promotional: number }[] }> {
  await getCustomer(ctx, customerId);
  const grants = await listGrantsOfCustomer(ctx.tx, ctx.tenantId, customerId);
  const balances = new Map<string, { currency: string; paid: number; promotional: number }>();
  for (const g of grants) {
    if (g.status !== 'active' || (g.expires_at && g.expires_at <= ctx.now)) continue;
    const b = balances.get(g.currency) ?? { currency: g.currency, paid: 0, promotional: 0 };
    b[g.category] += g.remaining;
    balances.set(g.currency, b);
  }
  return { grants, balances: [...balances.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1)) };
}

/** A customer's spendable paid credit in a currency (auto top-up and the credit_balance_below alert read it). */
export async function paidCreditBalance(ctx: Ctx, customerId: string, currency: string): Promise<number> {
  const { balances } = await listCreditGrants(ctx, customerId);
  return balances.find((b) => b.currency === currency)?.paid ?? 0;
}

/**
 * Every movement of a customer's grants — granted, drawn, expired, voided — oldest first: the
 * rows a customer's balance transactions list (document = the grant, and the invoice of a draw).
 */
export async function listCreditGrantMovements(
  ctx: Ctx,
  customerId: string,
): Promise<{ id: string; grant_id: string; invoice_id: string | null; kind: CreditMovementKind; amount: number; tax_amount: number; created_at: string }[]> {
  const rows = await movementsOfCustomer(ctx.tx, ctx.tenantId, customerId);
  return rows.map((r) => ({
    id: r.id,
    grant_id: r.grant_id,
    invoice_id: r.invoice_id,
    kind: r.kind,
    amount: r.amount,
    tax_amount: r.tax_amount,
    created_at: toIso(r.created_at),
  }));
}

// ── Draw-downs ──────────────────────────────────────────────────────────────────────────────

/** The lines of an invoice as the draw sees them: key, taxable amount (or total), plan and price type. */
export type DrawLine = { key: string; amount: number; plan_id: string | null; price_id: string | null };

async function priceTypes(ctx: Ctx, priceIds: (string | null)[]): Promise<Map<string, PriceType>> {
  const types = new Map<string, PriceType>();
  for (const id of new Set(priceIds.filter((p): p is string => p !== null))) {
    const price = await findPrice(ctx.tx, ctx.tenantId, id);
    types.set(id, price?.billing_scheme === 'metered' || price?.metric_code ? 'usage' : 'fixed');
  }
  return types;
}

const typed = (lines: DrawLine[], types: Map<string, PriceType>): LineForDraw[] =>
  lines.map((l) => ({ key: l.key, amount: l.amount, plan_id: l.plan_id, price_type: l.price_id ? (types.get(l.price_id) ?? 'fixed') : 'one_off' }));

export type PromotionalSubject = { customerId: string; currency: string; lines: DrawLine[] };
export type PromotionalDraws = { lineDiscounts: Map<string, number>; draws: { grant: CreditGrantRow; amount: number }[] };

/**
 * Draws promotional grants for invoices about to be finalized (the single path gives one draft,
 * the billing run its batch): locks the customers' grants, allocates per line before GST (grants by
 * priority then soonest expiry) and takes the amounts off the grants now. The caller puts the
 * discounts on the lines, issues the invoices, then calls recordPromotionalDraws with their ids.
 */
export async function drawPromotionalCredit(ctx: Ctx, subjects: PromotionalSubject[]): Promise<PromotionalDraws[]> {
  const empty = (): PromotionalDraws => ({ lineDiscounts: new Map(), draws: [] });
  if (subjects.length === 0) return [];
  const grants = await lockSpendableGrants(ctx.tx, ctx.tenantId, [...new Set(subjects.map((s) => s.customerId))], 'promotional', ctx.now);
  if (grants.length === 0) return subjects.map(empty);
  const types = await priceTypes(
    ctx,
    subjects.flatMap((s) => s.lines.map((l) => l.price_id)),
  );
  const left = new Map(grants.map((g) => [g.id, g]));
  const out: PromotionalDraws[] = [];
  for (const subject of subjects) {
    const mine = [...left.values()].filter((g) => g.customer_id === subject.customerId && g.currency === subject.currency && g.remaining > 0);
    if (mine.length === 0) {
      out.push(empty());
      continue;
    }
    const allocation = allocatePromotional(typed(subject.lines, types), mine);
    const draws: { grant: CreditGrantRow; amount: number }[] = [];
    for (const d of allocation.draws) {
      const drawn = await drawFromGrant(ctx.tx, ctx.tenantId, d.grantId, d.amount, ctx.now);
      if (!drawn) throw new Error(`credit grant ${d.grantId} had less than ${d.amount} left under its lock`);
      left.set(drawn.id, drawn);
      draws.push({ grant: drawn, amount: d.amount });
    }
    out.push({ lineDiscounts: allocation.lineDiscounts, draws });
  }
  return out;
}

/** The movements and events of promotional draws, once their invoices have ids. */
export async function recordPromotionalDraws(ctx: Ctx, items: { invoiceId: string; draws: PromotionalDraws['draws'] }[]): Promise<void> {
  for (const { invoiceId, draws } of items) {
    for (const { grant, amount } of draws) {
      await movement(ctx, grant, 'drawn', amount, { invoiceId });
      await emitEvent(ctx, 'credit_grant.drawn', { ...toCreditGrant(grant), drawn_amount: amount, drawn_invoice_id: invoiceId, tax_settled: 0 });
    }
  }
}

/**
 * Settles finalized invoices from the customers' paid grants, like a payment, in the finalizing
 * transaction: grants of the invoice's currency and entity, by priority then soonest expiry, each
 * on the lines it applies to. A draw of d settles d plus its share of the GST the top-up's receipt
 * voucher paid (an advance, taxed at receipt: CGST Act s.13(2)). The later invoice charges its own
 * GST as any supply does, and the voucher's tax on the part drawn is adjusted against it — the
 * 'applied' movement of the voucher, GSTR-1 table 11B (decision 0700) — so each rupee of tax is
 * counted once, in the books and in GSTR-3B 3.1(a) alike:
 *   Dr prepaid credit 2330 d; Dr output taxes (the share, tagged with the top-up invoice);
 *   Cr receivables d + share (tagged with the invoice).
 * Answers the amount settled per invoice id.
 */
export async function drawPaidCredit(ctx: Ctx, invoices: InvoiceRow[]): Promise<Map<string, number>> {
  const settled = new Map<string, number>();
  // A top-up is never paid with credit: credit cannot buy credit.
  const due = invoices.filter((i) => i.status === 'open' && i.amount_due > 0 && i.billing_reason !== CREDIT_TOP_UP_REASON);
  if (due.length === 0) return settled;
  const grants = await lockSpendableGrants(ctx.tx, ctx.tenantId, [...new Set(due.map((i) => i.customer_id))], 'paid', ctx.now);
  if (grants.length === 0) return settled;
  const restricted = grants.some((g) => g.applies_to);
  const lines: InvoiceLineRow[] = restricted
    ? await linesOfInvoices(
        ctx.tx,
        ctx.tenantId,
        due.map((i) => i.id),
      )
    : [];
  const types = await priceTypes(
    ctx,
    lines.map((l) => l.price_id),
  );
  const left = new Map(grants.map((g) => [g.id, g]));
  const entities = new Map<string, EntityRow>();
  for (const invoice of due) {
    const mine = [...left.values()]
      .filter((g) => g.customer_id === invoice.customer_id && g.currency === invoice.currency && g.entity_id === invoice.entity_id && g.remaining > 0)
      .sort(drawOrder);
    if (mine.length === 0) continue;
    // Per line, what is still unsettled (its total, with GST), for grants restricted by applies_to.
    const lineLeft = typed(
      lines.filter((l) => l.invoice_id === invoice.id).map((l) => ({ key: l.id, amount: l.total, plan_id: l.plan_id, price_id: l.price_id })),
      types,
    );
    let dueLeft = invoice.amount_due;
    for (const grant of mine) {
      if (dueLeft <= 0) break;
      const eligible = grant.applies_to ? lineLeft.filter((l) => grantAppliesTo(grant, l)) : null;
      const cap = eligible
        ? Math.min(
            dueLeft,
            eligible.reduce((s, l) => s + l.amount, 0),
          )
        : dueLeft;
      const { amount, tax } = paidDrawFor(grant, cap);
      if (amount <= 0) continue;
      const drawn = await drawFromGrant(ctx.tx, ctx.tenantId, grant.id, amount, ctx.now);
      if (!drawn) throw new Error(`credit grant ${grant.id} had less than ${amount} left under its lock`);
      left.set(drawn.id, drawn);
      const total = amount + tax.tax_amount;
      let toSpread = total;
      for (const l of eligible ?? lineLeft) {
        const take = Math.min(l.amount, toSpread);
        l.amount -= take;
        toSpread -= take;
      }
      dueLeft -= total;
      let entity = entities.get(invoice.entity_id);
      if (!entity) {
        entity = await entityOf(ctx, invoice.entity_id);
        entities.set(entity.id, entity);
      }
      const movementId = newId();
      const topUp = grant.invoice_id;
      // The tax the top-up's vouchers paid on this part is adjusted against the invoice (GSTR-1 11B).
      const inr = await adjustPrepayment(ctx, {
        grantId: grant.id,
        invoiceId: invoice.id,
        subtotal: amount,
        cgst_amount: tax.cgst_amount,
        sgst_amount: tax.sgst_amount,
        igst_amount: tax.igst_amount,
      });
      // A foreign-currency voucher's tax leaves output tax at the rupees it was charged at (rule 34),
      // as 11B reports it; what that differs from the receivable's value is realized (decision 0840).
      const fx = (rupees: number | undefined) => (inr && rupees !== undefined && entity.functional_currency === 'INR' ? { functional: rupees } : {});
      await postEntry(ctx, {
        ledgerId: entity.tb_ledger_id,
        entityId: entity.id,
        kind: 'credit_grant.drawn',
        referenceType: 'credit_grant_movement',
        referenceId: movementId,
        currency: invoice.currency,
        description: `Prepaid credit applied to invoice ${invoice.number}`,
        ...(inr ? { exchangeDifference: 'realized' as const } : {}),
        lines: [
          { account: Account.PREPAID_CREDIT, debit: amount, customerId: invoice.customer_id, invoiceId: topUp },
          { account: Account.CGST_PAYABLE, debit: tax.cgst_amount, invoiceId: topUp, ...fx(inr?.inr_cgst_amount) },
          { account: Account.SGST_PAYABLE, debit: tax.sgst_amount, invoiceId: topUp, ...fx(inr?.inr_sgst_amount) },
          { account: Account.IGST_PAYABLE, debit: tax.igst_amount, invoiceId: topUp, ...fx(inr?.inr_igst_amount) },
          { account: Account.RECEIVABLES, credit: total, customerId: invoice.customer_id, invoiceId: invoice.id },
        ],
      });
      await insertMovements(ctx.tx, [
        {
          tenant_id: ctx.tenantId,
          id: movementId,
          grant_id: grant.id,
          customer_id: grant.customer_id,
          kind: 'drawn',
          amount,
          tax_amount: tax.tax_amount,
          invoice_id: invoice.id,
          created_at: ctx.now,
        },
      ]);
      await applyToInvoice(ctx, invoice.id, { credited: total });
      await emitEvent(ctx, 'credit_grant.drawn', { ...toCreditGrant(drawn), drawn_amount: amount, drawn_invoice_id: invoice.id, tax_settled: tax.tax_amount });
      settled.set(invoice.id, (settled.get(invoice.id) ?? 0) + total);
    }
  }
  return settled;
}

/** Which of these customers hold a spendable grant (the billing run draws only for them). */
export async function customersHoldingGrants(ctx: Ctx, customerIds: string[]): Promise<Set<string>> {
  return customersWithGrants(ctx.tx, ctx.tenantId, customerIds, ctx.now);
}

/** Spendable paid credit by `customer/currency` (the credit_balance_below alerts and auto top-up read it). */
export async function paidCreditBalances(ctx: ReadCtx, customerIds: string[]): Promise<Map<string, number>> {
  const rows = await paidBalancesOf(ctx.tx, ctx.tenantId, customerIds, ctx.now);
  return new Map(rows.map((r) => [`${r.customer_id}/${r.currency}`, r.balance]));
}

// ── Auto top-up ─────────────────────────────────────────────────────────────────────────────

export function toAutoTopUp(row: AutoTopUpRow) {
  return {
    customer_id: row.customer_id,
    enabled: row.enabled,
    currency: row.currency,
    threshold: row.threshold,
    amount: row.amount,
    payment_method_id: row.payment_method_id,
    in_flight_invoice_id: row.in_flight_invoice_id,
    updated_at: toIso(row.updated_at),
  };
}

export async function saveAutoTopUp(
  ctx: Ctx,
  customerId: string,
  body: { enabled: boolean; threshold: number; amount: number; currency: string; payment_method_id?: string | null },
): Promise<AutoTopUpRow> {
  await getCustomer(ctx, customerId);
  return upsertAutoTopUp(ctx.tx, {
    tenant_id: ctx.tenantId,
    customer_id: customerId,
    enabled: body.enabled,
    currency: body.currency,
    threshold: body.threshold,
    amount: body.amount,
    payment_method_id: body.payment_method_id ?? null,
    in_flight_invoice_id: null,
    updated_at: ctx.now,
  });
}

export async function getAutoTopUp(ctx: ReadCtx, customerId: string): Promise<AutoTopUpRow> {
  await getCustomer(ctx, customerId);
  const row = await findAutoTopUp(ctx.tx, ctx.tenantId, customerId);
  if (!row) throw errors.notFound('auto top-up');
  return row;
}

/** The customers whose paid balance is below their enabled auto top-up's threshold, with none in flight. */
export async function autoTopUpsDue(ctx: Ctx, customerIds: string[]): Promise<AutoTopUpRow[]> {
  const settings = await enabledAutoTopUps(ctx.tx, ctx.tenantId, customerIds);
  if (settings.length === 0) return [];
  const balances = await paidCreditBalances(
    ctx,
    settings.map((s) => s.customer_id),
  );
  return settings.filter((s) => (balances.get(`${s.customer_id}/${s.currency}`) ?? 0) < s.threshold);
}

/** Claims the customer's auto top-up for one run (none in flight), or answers undefined. */
export async function claimAutoTopUpRow(ctx: Ctx, customerId: string, placeholder: string): Promise<AutoTopUpRow | undefined> {
  return claimAutoTopUp(ctx.tx, ctx.tenantId, customerId, placeholder);
}

/** Records the top-up invoice the claimed run created (replacing its placeholder). */
export async function recordAutoTopUpInvoice(ctx: Ctx, customerId: string, placeholder: string, invoiceId: string): Promise<void> {
  await setInFlightInvoice(ctx.tx, ctx.tenantId, customerId, invoiceId, placeholder);
}

/** A top-up invoice paid or voided: its customer's auto top-up may run again. */
export async function releaseAutoTopUp(ctx: Ctx, customerId: string, invoiceId: string): Promise<void> {
  await setInFlightInvoice(ctx.tx, ctx.tenantId, customerId, null, invoiceId);
}

export { expirableGrantsInClockScope } from './credits.repository.js';
