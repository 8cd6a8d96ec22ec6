/**
 * The invariant harness: random sequences of invoicing operations — create/finalize/void invoices,
 * partial and full payments with and without TDS, credit notes tied to invoices (whole or by
 * line, pending approval or issued) and standalone, applied/approved/voided/expired, voids of
 * invoices that carry notes — across three legal entities (two registered for GST, one without a
 * GSTIN, which charges no GST), several customers and three currencies (INR; USD and KWD, a
 * three-decimal currency, for customers abroad), through the public API. After every step the
 * books must tie out:
 *   1. every journal entry balances;
 *   2. for each invoice, receivables in the ledger equal its amount_due (0 for drafts and voids);
 *   3. cash and TDS receivable in the ledger equal the payments recorded, per currency;
 *   4. for each credit note, customer credit in the ledger equals its balance;
 *   5. each entity's invoice and credit-note numbers are 1..N without gaps, per series;
 *   6. no amount that must not be negative is negative;
 *   7. an invoice's live credit notes (not void or rejected) never reverse more taxable value,
 *      CGST, SGST or IGST than the invoice charged;
 *   8. no output-tax account of an invoice ends negative;
 *   9. the revenue reversed for an invoice never exceeds its revenue;
 *  10. a tied note's credit settles its own invoice first: a note with credit left over (or
 *      spent on another invoice) has left its own invoice with nothing due;
 *  11. balances are per currency: every line of an entry tags documents of the entry's currency,
 *      and each (ledger, currency) balances on its own.
 *  12. every issued B2B or export invoice, and every credit note against one, makes an IRP
 *      e-invoice document (schema 1.1) that passes the schema.
 *  13. a reconciliation run (billing ↔ journal ↔ secondary ledger) finds zero discrepancies, and
 *      every entity × currency's trial balance balances (checkBooks).
 *  14. discounts (coupons on invoices and on subscriptions, with seat changes prorated) lower the
 *      taxable value per line and never below zero: each line's amount is quantity × unit_amount
 *      − discount_amount ≥ 0, the invoice's discount is its lines', and the finalization entry
 *      credits revenue with exactly the (net) subtotal.
 *  15. an entity without a GSTIN is not registered for GST: nothing ever posts to CGST, SGST or
 *      IGST payable in its ledger, and its invoices and credit notes carry no tax (DESIGN §20).
 * Gateway operations (collections, kept in their own arbitrary `gatewayOp` and step function
 * `gatewayStep` below): card charges through `POST /v1/invoices/{id}/pay` on the test gateway that
 * succeed or are declined, the gateway paying out (clearing → cash after T+2), and refunds of
 * gateway and offline payments that the gateway processes or refuses. Check 3 then reads: cash =
 * offline payments − offline refunds marked paid + settled gateway payments; gateway clearing =
 * unsettled gateway payments − gateway refunds not failed; refunds payable = pending offline
 * refunds (of offline payments and of note balances naming no payment); and every payment's
 * refunds (not failed) never exceed it.
 * Offline refunds settled by hand (decision 0570: `settle_refund` marks a pending offline refund
 * of the history paid, maybe back-dated, or failed, then tries a second mark) add: a second mark
 * answers 409 and books nothing; a refund marked paid or failed stays so; a paid one has exactly
 * one `refund.paid` Dr 2320 / Cr 1000 of its amount tagged with its customer, 2320 leaving at the
 * rupee value `refund.created` booked (cash at the day's rate: the difference is realized exchange).
 * An advance's refund paid by hand (decision 0740) is settled the same way, 2320 leaving at the value
 * its refund voucher (or the gateway's refusal it replaces) booked; marking it failed answers 409.
 * Refunds by line and by a note's balance (DESIGN §20: `refund_lines` names lines of the payment's
 * invoice, `refund_note` pays a note's unspent balance out through `POST /v1/credit-notes/{id}/refunds`,
 * and a payment refund without lines pays the invoice's unspent credit out first) add:
 *  15. output tax reversed never exceeds what was charged, per invoice line (the notes' lines), and
 *      the ledger's tax reversals of an invoice are exactly its live notes' taxes: a refund itself
 *      never touches output tax or revenue;
 *  16. per customer, cash received − refunded = the ledger's money accounts tagged with the
 *      customer (cash + gateway clearing − refunds payable).
 * Functional-currency books (DESIGN §19, decision 0290): every entity has USD and KWD rates from
 * the start, and `fx_rate` moves a rate (up or down to 5 %) at the current instant, while
 * `time_passes` moves the clock across month ends. After every step (checkFunctionalBooks):
 *  17. every entry balances in INR too, and none is left unvalued; each entity's functional trial
 *      balance balances;
 *  18. each foreign invoice's finalization books its receivable at its INR value: `inr_total`, or
 *      `total` × its `exchange_rate` rounded half-up once where GST determines no INR amounts;
 *  19. money lines (cash, gateway clearing, refunds payable) are worth their amount × the entry's
 *      rate, rounded half-up; a settled invoice's receivable and a spent note's credit are 0 in
 *      INR as in their currency — so what is left between the money at its day's rate and the
 *      documents at theirs is exactly the realized exchange gain/loss line (4300) or rounding
 *      (4390), the only lines without a transaction-currency amount.
 * Customer advances (DESIGN §20, decision 0280: `advance` an offline payment without an invoice,
 * `apply_balance`, `advance_refund`) and a gateway webhook announcing the wrong amount or currency
 * (`mismatch`, decision 0242) add:
 *  20. each advance's balance is its amount less its uses, its open value and tax are what its
 *      receipt voucher carried less what its uses took, and the uses never take more tax than the
 *      voucher carried;
 *  21. per customer and currency, customer advances (2310) = the advances' balances and GST paid on
 *      advances (1300) = the tax on those balances; refunds payable = the pending offline refunds,
 *      the refund vouchers paid by hand among them (decision 0740);
 *  22. a mismatched webhook applies nothing: the invoice stays open with no payment of it.
 *  23. every GST-registered entity's GSTR-1 of the month conforms to the committed GSTN
 *      offline-tool schema (src/modules/gst-returns/gstr1-schema.json, decision 0361).
 *  24. a foreign-currency advance's rupee value and tax (decision 0400) are its voucher's less its
 *      uses' rupee shares, all taken when it is used up, and 1300 in rupees is the rupee tax on the
 *      open balances; an advance refunded through its gateway (decision 0401) sits in gateway
 *      clearing like any gateway refund, one the gateway refused in refunds payable.
 * One truth across the books (issue #34; checkOneTruth, each a named invariant): GSTR-3B tax =
 * the output-tax accounts per entity and month; revenue report = revenue accounts; Tally export =
 * the INR trial balance per entity; a return marked filed (the `file` op) reads byte for byte as it
 * did when filed, JSON and CSV; GSTR-1 adds up to GSTR-3B table 3.1 per row and head with the
 * decision-0362 carry, and its sections to its HSN summary per rate.
 * Runs a few histories from a fixed seed in `npm test`; test/support/property-runs.ts says how to hunt longer.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinFor } from '../support/billing.js';
import { secondActor } from '../support/operators.js';
import { irpDocumentOf, validateIrpDocument } from '../../src/modules/einvoicing/index.js';
import { signTestWebhook, TEST_SIGNATURE_HEADER } from '../../src/modules/collections/index.js';
import { getGstr1, getGstr3b, validateGstr1 } from '../../src/modules/gst-returns/index.js';
import { TALLY_LEDGERS } from '../../src/modules/accounting/index.js';
import { ACCOUNT_NAMES, type AccountCode } from '../../src/modules/ledger/index.js';
import { nextPeriod, periodBounds, periodOf } from '../../src/modules/periods/index.js';
import { XMLParser } from 'fast-xml-parser';
import { localDate } from '../../src/modules/tax/index.js';
import { expectBalancedTrialBalances, reconcileTenant } from '../support/reconciliation.js';
import { convertMinorUnits } from '../../src/platform/money.js';
import { INVARIANT_RUNS, propertyRuns } from '../support/property-runs.js';

const RUNS = INVARIANT_RUNS;
const STEPS = Number(process.env.KOSH_INVARIANT_STEPS ?? 18);

let t: TestKosh;
beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(() => t.close());

type World = {
  tenant: Tenant;
  /** A second key: four eyes (decision 0221) needs someone other than the requester to approve. */
  approver: Tenant['api'];
  entities: string[];
  customers: string[];
  invoices: string[];
  notes: string[];
  /** Payments (offline and gateway) that a refund may pick. */
  payments: string[];
  /** Refunds the history made (of payments, by lines, of note balances), for the settle_refund op. */
  refunds: string[];
  /** Offline refunds marked paid or failed by hand (decision 0570), and the status each was left in. */
  settled: Map<string, 'succeeded' | 'failed'>;
  /** Saved test-gateway payment methods, by `customer:token`. */
  cards: Map<string, string>;
  plan?: string;
  subscription?: string;
  /** The add-on price and the subscription's item of it (decision 0470), for the add_on op. */
  addOn?: { price: string; item?: string };
  /** Two children billed to customers[1] and their subscriptions (decision 0550), for the group op. */
  group?: { children: string[]; subscriptions: string[] };
  coupons: number;
  /** Customer advances (receipt vouchers). */
  advances: string[];
  /** A test-gateway connection with a webhook secret, for the mismatch op. */
  hooks?: { connection: string; secret: string };
  /** Returns marked filed, as they read (JSON and CSV) when they were filed, by `kind|entity|MMYYYY`. */
  filed: Map<string, { json: string; csv: string }>;
};

const offlineOp = fc.oneof(
  fc.record({
    kind: fc.constant('invoice' as const),
    customer: fc.nat(),
    entity: fc.nat(),
    amounts: fc.array(fc.oneof(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 100, max: 5_000_000 })), { minLength: 1, maxLength: 3 }),
    // Mixed rates: 18 % services, 5 % and 12 % goods.
    hsn: fc.array(fc.constantFrom('998314', '0902', '6904'), { minLength: 3, maxLength: 3 }),
    finalize: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('finalize' as const), invoice: fc.nat() }),
  fc.record({ kind: fc.constant('void' as const), invoice: fc.nat() }),
  fc.record({ kind: fc.constant('pay' as const), invoice: fc.nat(), share: fc.integer({ min: 1, max: 100 }), tds: fc.integer({ min: 0, max: 10 }) }),
  fc.record({
    kind: fc.constant('credit' as const),
    customer: fc.nat(),
    invoice: fc.option(fc.nat(), { nil: undefined }),
    share: fc.integer({ min: 1, max: 100 }),
    expires: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('apply' as const), note: fc.nat(), invoice: fc.nat(), share: fc.integer({ min: 1, max: 100 }) }),
  // Several partial credit notes that together credit the whole invoice: their roundings must
  // still add up to the invoice's own taxable value and taxes (check 7).
  fc.record({
    kind: fc.constant('credit_in_parts' as const),
    invoice: fc.nat(),
    weights: fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 2, maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant('void_credit' as const), note: fc.nat() }),
  // A note tied to the invoice (pending approval or issued), then a void of the invoice, then an
  // attempt to approve the note: the void must leave nothing reversed twice.
  fc.record({ kind: fc.constant('void_with_notes' as const), invoice: fc.nat(), share: fc.integer({ min: 1, max: 100 }), pending: fc.boolean() }),
  fc.record({ kind: fc.constant('governance' as const), on: fc.boolean() }),
  fc.record({ kind: fc.constant('approve' as const), note: fc.nat(), reject: fc.boolean() }),
  // A note crediting one line of the invoice.
  fc.record({ kind: fc.constant('credit_line' as const), invoice: fc.nat(), line: fc.nat(), share: fc.integer({ min: 1, max: 100 }), expires: fc.boolean() }),
  // Goodwill credit in the second currency.
  fc.record({ kind: fc.constant('credit_usd' as const), share: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ kind: fc.constant('time_passes' as const), days: fc.integer({ min: 1, max: 60 }) }),
  // The dollar or the dinar moves: a new rate for every entity from now on (± up to 5 %).
  fc.record({ kind: fc.constant('fx_rate' as const), currency: fc.constantFrom('USD', 'KWD'), permille: fc.integer({ min: -50, max: 50 }) }),
  // A coupon on one invoice, then a credit note on it and a payment of the rest with TDS.
  fc.record({
    kind: fc.constant('coupon_credit_tds' as const),
    customer: fc.nat(),
    entity: fc.nat(),
    amounts: fc.array(fc.integer({ min: 1, max: 5_000_000 }), { minLength: 1, maxLength: 3 }),
    hsn: fc.array(fc.constantFrom('998314', '0902', '6904'), { minLength: 3, maxLength: 3 }),
    percent: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
    off: fc.integer({ min: 1, max: 6_000_000 }),
    credit: fc.integer({ min: 0, max: 100 }),
    tds: fc.integer({ min: 0, max: 10 }),
  }),
  // Seats on a subscription (with or without a forever coupon), prorated or not.
  fc.record({ kind: fc.constant('seats' as const), quantity: fc.integer({ min: 1, max: 6 }), prorate: fc.boolean(), coupon: fc.boolean() }),
  // An add-on item on that subscription (decision 0470): added, its quantity changed, or removed (quantity 0), prorated or not.
  fc.record({ kind: fc.constant('add_on' as const), quantity: fc.integer({ min: 0, max: 4 }), prorate: fc.boolean() }),
  // A minimum commitment per period (decision 0540) on that subscription — created with one when there
  // is none yet — over the whole subscription or its plan price; amount 0 removes it. Renewals true it up.
  fc.record({ kind: fc.constant('commitment' as const), amount: fc.integer({ min: 0, max: 400_000 }), perPrice: fc.boolean() }),
  // A parent paying for children (decision 0550): two children billed to customer 1 subscribe (their
  // first invoices are the parent's); their renewals land on the parent's consolidated invoice.
  fc.record({ kind: fc.constant('group' as const), quantity: fc.integer({ min: 1, max: 3 }) }),
  // Money before any invoice: an advance (services, or goods: no GST) for any entity, the unregistered one too.
  fc.record({
    kind: fc.constant('advance' as const),
    customer: fc.nat(),
    entity: fc.nat(),
    amount: fc.oneof(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 1_000, max: 3_000_000 })),
    goods: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('apply_balance' as const), invoice: fc.nat() }),
  // Prepaid credit bought and paid (decision 0700: an advance under a receipt voucher); the
  // customer's next invoices of the primary entity draw it (11B), so GSTR-3B must still equal
  // what the output-tax accounts moved.
  fc.record({ kind: fc.constant('top_up' as const), customer: fc.integer({ min: 0, max: 1 }), amount: fc.integer({ min: 1, max: 500_000 }) }),
  fc.record({ kind: fc.constant('advance_refund' as const), advance: fc.nat(), share: fc.integer({ min: 1, max: 100 }), whole: fc.boolean() }),
  // A GST-registered entity files GSTR-1, GSTR-3B or both of this month or one or two before (which closes the month).
  fc.record({
    kind: fc.constant('file' as const),
    entity: fc.nat(),
    back: fc.integer({ min: 0, max: 2 }),
    returns: fc.constantFrom('gstr1', 'gstr3b', 'both'),
  }),
);

// ── Collections: gateway payments and refunds ────────────────────────────────────────────────
// The test gateway's tokens decide the outcome: tok_visa is charged and refunded, tok_refundFail is
// charged but its refunds are refused, tok_chargeDeclined is declined (card_declined).
const gatewayOp = fc.oneof(
  // `fresh`: a new finalized invoice is charged (so short histories still reach the gateway).
  fc.record({
    kind: fc.constant('charge' as const),
    invoice: fc.nat(),
    fresh: fc.boolean(),
    amount: fc.integer({ min: 1, max: 2_000_000 }),
    token: fc.constantFrom('tok_visa', 'tok_refundFail', 'tok_chargeDeclined'),
    // Days that pass after the charge (the payout comes after two), so short histories settle too.
    then: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('gateway_settles' as const), hours: fc.integer({ min: 24, max: 96 }) }),
  fc.record({ kind: fc.constant('refund' as const), payment: fc.nat(), share: fc.integer({ min: 1, max: 100 }), whole: fc.boolean() }),
  // A refund that credits named lines of the payment's invoice (one or two lines).
  fc.record({
    kind: fc.constant('refund_lines' as const),
    payment: fc.nat(),
    lines: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
    share: fc.integer({ min: 1, max: 100 }),
  }),
  // A note's unspent balance paid out, through a payment picked here or the note's own default.
  fc.record({
    kind: fc.constant('refund_note' as const),
    note: fc.nat(),
    payment: fc.option(fc.nat(), { nil: undefined }),
    share: fc.integer({ min: 1, max: 100 }),
  }),
  // The gateway reports a refund it had paid as failed after all (decision 0860, a signed refund.failed).
  fc.record({ kind: fc.constant('refund_fails_later' as const), refund: fc.nat() }),
  // A signed webhook for a pending charge announcing the wrong amount or currency; then, maybe, the right one.
  fc.record({
    kind: fc.constant('mismatch' as const),
    amount: fc.integer({ min: 100, max: 500_000 }),
    wrong: fc.constantFrom('amount', 'currency'),
    then: fc.boolean(),
  }),
);
type GatewayOp = typeof gatewayOp extends fc.Arbitrary<infer T> ? T : never;

// An offline refund paid out by hand (mark_paid, at a paid_at between the refund and now, or now)
// or not paid (mark_failed), then a second mark of either kind, refused (decision 0570). Its own
// weight: it needs an offline refund made before it, so it is drawn more often than one gateway op.
const settleOp = fc.record({
  kind: fc.constant('settle_refund' as const),
  refund: fc.nat(),
  // With no pending offline refund in the history (or when `fresh`): refund `share` of an offline
  // payment of the history, or of a new invoice of `amount` to a customer paid offline in full.
  fresh: fc.boolean(),
  customer: fc.nat(),
  amount: fc.integer({ min: 1, max: 2_000_000 }),
  share: fc.integer({ min: 1, max: 100 }),
  paid: fc.boolean(),
  when: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
  again: fc.constantFrom('mark_paid', 'mark_failed'),
});
type SettleOp = typeof settleOp extends fc.Arbitrary<infer T> ? T : never;

const op = fc.oneof({ arbitrary: offlineOp, weight: 3 }, { arbitrary: gatewayOp, weight: 2 }, { arbitrary: settleOp, weight: 1 });
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

const pick = <T>(list: T[], i: number): T | undefined => (list.length ? list[i % list.length] : undefined);
const part = (amount: number, share: number) => Math.max(1, Math.floor((amount * share) / 100));

const BASE_RATES: Record<string, string> = { USD: '83.25', KWD: '270.5' };

async function newWorld(): Promise<World> {
  const tenant = await t.registerTenant({ gstin: gstinFor('29') });
  const second = await tenant.api('POST', '/v1/entities', {
    name: 'West',
    invoice_prefix: 'MH-',
    gstin: gstinFor('27', 'CCCCC3333C1Z'),
    address: { line1: '5 Marine Drive', city: 'Mumbai', postal_code: '400002' },
  });
  // Not registered for GST (no GSTIN): it charges none, to anyone.
  const unregistered = await tenant.api('POST', '/v1/entities', { name: 'Small Shop', invoice_prefix: 'UR-', state_code: '29' });
  const entities = [(await tenant.api('GET', '/v1/entities')).body.data[0].id, second.body.data.id, unregistered.body.data.id];
  await tenant.api('PATCH', `/v1/entities/${entities[0]}`, { address: { line1: '1 MG Road', city: 'Bengaluru', postal_code: '560001' } });
  const customers: string[] = [];
  for (const [i, body] of [
    {
      gstin: gstinFor('29', 'BBBBB2222B1Z'),
      billing_address: { line1: '9 Church Street', city: 'Bengaluru', postal_code: '560001', state_code: '29', country: 'IN' },
    },
    { billing_address: { state_code: '27', country: 'IN' } },
    { billing_address: { line1: '1 Congress Ave', city: 'Austin', country: 'US' } },
    { billing_address: { line1: 'Gulf Road', city: 'Kuwait City', country: 'KW' } },
  ].entries()) {
    customers.push((await tenant.api('POST', '/v1/customers', { email: `c${i}@model.test`, ...body })).body.data.id);
  }
  // Every entity knows a rate for the foreign currencies it invoices in (DESIGN §19).
  for (const entity of entities) {
    for (const [currency, rate] of Object.entries(BASE_RATES)) await tenant.api('PUT', `/v1/entities/${entity}/exchange-rates`, { currency, rate });
  }
  const approver = await secondActor(tenant);
  return {
    tenant,
    approver,
    entities,
    customers,
    invoices: [],
    notes: [],
    payments: [],
    refunds: [],
    settled: new Map(),
    cards: new Map(),
    coupons: 0,
    advances: [],
    filed: new Map(),
  };
}

/** The currency a customer is invoiced in: USD in the US, KWD (three decimals) in Kuwait, else INR. */
function currencyOf(w: World, customer: string): string {
  return customer === w.customers[2] ? 'USD' : customer === w.customers[3] ? 'KWD' : 'INR';
}

async function step(w: World, o: Op): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  if (
    o.kind === 'charge' ||
    o.kind === 'gateway_settles' ||
    o.kind === 'refund' ||
    o.kind === 'refund_lines' ||
    o.kind === 'refund_note' ||
    o.kind === 'settle_refund' ||
    o.kind === 'mismatch' ||
    o.kind === 'refund_fails_later'
  )
    return gatewayStep(w, o);
  switch (o.kind) {
    case 'invoice': {
      const customer = pick(w.customers, o.customer)!;
      const res = await api('POST', '/v1/invoices', {
        customer_id: customer,
        entity_id: pick(w.entities, o.entity),
        currency: currencyOf(w, customer),
        lines: o.amounts.map((unit_amount, i) => ({ description: 'x', unit_amount, hsn_code: o.hsn[i] })),
        auto_finalize: o.finalize,
      });
      if (res.status === 201) w.invoices.push(res.body.data.id);
      return res;
    }
    case 'finalize':
    case 'void': {
      const id = pick(w.invoices, o.invoice);
      return id ? api('POST', `/v1/invoices/${id}/${o.kind}`) : undefined;
    }
    case 'pay': {
      const id = pick(w.invoices, o.invoice);
      if (!id) return undefined;
      const inv = (await api('GET', `/v1/invoices/${id}`)).body.data;
      const total = part(inv.amount_due, o.share);
      const tds = Math.min(Math.floor((total * o.tds) / 100), total - 1);
      const res = await api('POST', '/v1/payments/offline', {
        customer_id: inv.customer_id,
        invoice_id: id,
        payment_type: 'bank_transfer',
        currency: inv.currency,
        amount: total - tds,
        tds_amount: tds,
      });
      if (res.status === 201) w.payments.push(res.body.data.id);
      return res;
    }
    case 'credit': {
      const invoiceId = o.invoice === undefined ? undefined : pick(w.invoices, o.invoice);
      const inv = invoiceId ? (await api('GET', `/v1/invoices/${invoiceId}`)).body.data : undefined;
      const res = await api('POST', '/v1/credit-notes', {
        customer_id: inv?.customer_id ?? pick(w.customers, o.customer),
        invoice_id: invoiceId,
        amount: part(inv?.total || 10_000, o.share),
        ...(inv ? {} : { currency: 'INR' }),
        ...(o.expires ? { expires_at: new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString() } : {}),
      });
      if (res.status === 201) w.notes.push(res.body.data.id);
      return res;
    }
    case 'credit_in_parts': {
      const invoiceId = pick(w.invoices, o.invoice);
      if (!invoiceId) return undefined;
      const inv = (await api('GET', `/v1/invoices/${invoiceId}`)).body.data;
      const sum = o.weights.reduce((a, b) => a + b, 0);
      const amounts = o.weights.map((weight) => Math.floor((inv.total * weight) / sum));
      amounts[amounts.length - 1]! += inv.total - amounts.reduce((a, b) => a + b, 0);
      let last: ApiResponse | undefined;
      for (const amount of amounts.filter((a) => a > 0)) {
        last = await api('POST', '/v1/credit-notes', { customer_id: inv.customer_id, invoice_id: invoiceId, amount });
        if (last.status === 201) w.notes.push(last.body.data.id);
        else break; // already credited, or not creditable: refusals are fine
      }
      return last;
    }
    case 'apply': {
      const noteId = pick(w.notes, o.note);
      const invoiceId = pick(w.invoices, o.invoice);
      if (!noteId || !invoiceId) return undefined;
      const n = (await api('GET', `/v1/credit-notes/${noteId}`)).body.data;
      return api('POST', `/v1/credit-notes/${noteId}/apply`, { invoice_id: invoiceId, amount: part(Math.max(n.balance, 1), o.share) });
    }
    case 'void_credit': {
      const noteId = pick(w.notes, o.note);
      return noteId ? api('POST', `/v1/credit-notes/${noteId}/void`) : undefined;
    }
    case 'void_with_notes': {
      const id = pick(w.invoices, o.invoice);
      if (!id) return undefined;
      const inv = (await api('GET', `/v1/invoices/${id}`)).body.data;
      if (o.pending) await api('PATCH', '/v1/settings', { credit_note_approval_required: true });
      const created = await api('POST', '/v1/credit-notes', { customer_id: inv.customer_id, invoice_id: id, amount: part(inv.total || 1, o.share) });
      if (o.pending) await api('PATCH', '/v1/settings', { credit_note_approval_required: false });
      if (created.status === 201) w.notes.push(created.body.data.id);
      const voided = await api('POST', `/v1/invoices/${id}/void`);
      if (voided.status >= 500) return voided;
      return created.status === 201 ? w.approver('POST', `/v1/credit-notes/${created.body.data.id}/approve`) : voided;
    }
    case 'governance':
      return api('PATCH', '/v1/settings', { credit_note_approval_required: o.on });
    case 'approve': {
      const noteId = pick(w.notes, o.note);
      return noteId ? w.approver('POST', `/v1/credit-notes/${noteId}/${o.reject ? 'reject' : 'approve'}`) : undefined;
    }
    case 'credit_line': {
      const invoiceId = pick(w.invoices, o.invoice);
      if (!invoiceId) return undefined;
      const inv = (await api('GET', `/v1/invoices/${invoiceId}`)).body.data;
      const line = pick(inv.lines as { id: string; total: number }[], o.line)!;
      const res = await api('POST', '/v1/credit-notes', {
        customer_id: inv.customer_id,
        invoice_id: invoiceId,
        lines: [{ invoice_line_id: line.id, amount: part(line.total || 1, o.share) }],
        ...(o.expires ? { expires_at: new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString() } : {}),
      });
      if (res.status === 201) w.notes.push(res.body.data.id);
      return res;
    }
    case 'credit_usd': {
      const res = await api('POST', '/v1/credit-notes', { customer_id: w.customers[2], amount: part(10_000, o.share), currency: 'USD' });
      if (res.status === 201) w.notes.push(res.body.data.id);
      return res;
    }
    case 'fx_rate': {
      // e.g. USD 83.25 moved by +12 ‰: 84.249 (three decimals are enough here).
      const rate = ((Number(BASE_RATES[o.currency]) * (1000 + o.permille)) / 1000).toFixed(3);
      let last: ApiResponse | undefined;
      for (const entity of w.entities) last = await api('PUT', `/v1/entities/${entity}/exchange-rates`, { currency: o.currency, rate });
      return last;
    }
    case 'time_passes': {
      t.clock.advanceDays(o.days);
      await t.kosh.worker.drain();
      if (w.subscription) {
        const renewed = await api('GET', `/v1/invoices?subscription_id=${w.subscription}&limit=1000`);
        for (const inv of renewed.body.data as { id: string }[]) if (!w.invoices.includes(inv.id)) w.invoices.push(inv.id);
      }
      await parentInvoices(w);
      return undefined;
    }
    case 'coupon_credit_tds': {
      const customer = pick(w.customers, o.customer)!;
      const currency = currencyOf(w, customer);
      const coupon = await api('POST', '/v1/coupons', {
        code: `c${(w.coupons += 1)}`,
        duration: 'once',
        ...(o.percent === undefined ? { amount_off: o.off, currency } : { percent_off: o.percent / 100 }),
      });
      if (coupon.status !== 201) return coupon;
      const res = await api('POST', '/v1/invoices', {
        customer_id: customer,
        entity_id: pick(w.entities, o.entity),
        currency,
        lines: o.amounts.map((unit_amount, i) => ({ description: 'x', unit_amount, hsn_code: o.hsn[i] })),
        coupon: coupon.body.data.code,
      });
      if (res.status !== 201) return res;
      w.invoices.push(res.body.data.id);
      const inv = res.body.data;
      if (o.credit > 0 && inv.total > 0) {
        const note = await api('POST', '/v1/credit-notes', { customer_id: customer, invoice_id: inv.id, amount: part(inv.total, o.credit) });
        if (note.status >= 500) return note;
        if (note.status === 201) w.notes.push(note.body.data.id);
      }
      const due = (await api('GET', `/v1/invoices/${inv.id}`)).body.data.amount_due;
      if (due <= 1) return res;
      const tds = Math.min(Math.floor((due * o.tds) / 100), due - 1);
      return api('POST', '/v1/payments/offline', {
        customer_id: customer,
        invoice_id: inv.id,
        payment_type: 'bank_transfer',
        currency,
        amount: due - tds,
        tds_amount: tds,
      });
    }
    case 'advance': {
      const customer = pick(w.customers, o.customer)!;
      const res = await api('POST', '/v1/payments/offline', {
        customer_id: customer,
        entity_id: pick(w.entities, o.entity),
        payment_type: 'bank_transfer',
        currency: currencyOf(w, customer),
        amount: o.amount,
        ...(o.goods ? { hsn_code: '0902' } : {}),
      });
      if (res.status === 201) {
        w.payments.push(res.body.data.id);
        const made = (await api('GET', `/v1/advances?customer_id=${customer}&limit=1000`)).body.data as { id: string; payment_id: string }[];
        for (const a of made) if (a.payment_id === res.body.data.id) w.advances.push(a.id);
      }
      return res;
    }
    case 'top_up': {
      const customer = w.customers[o.customer]!;
      const grant = await api('POST', `/v1/customers/${customer}/credit-grants`, { category: 'paid', currency: 'INR', amount: o.amount });
      if (grant.status !== 201) return grant;
      const topUp = (await api('GET', `/v1/invoices/${grant.body.data.invoice_id}`)).body.data;
      return api('POST', '/v1/payments/offline', { customer_id: customer, invoice_id: topUp.id, amount: topUp.amount_due, payment_type: 'bank_transfer' });
    }
    case 'apply_balance': {
      const id = pick(w.invoices, o.invoice);
      return id ? api('POST', `/v1/invoices/${id}/apply-balance`) : undefined;
    }
    case 'advance_refund': {
      const id = pick(w.advances, o.advance);
      if (!id) return undefined;
      const a = (await api('GET', `/v1/advances/${id}`)).body.data;
      return api('POST', `/v1/advances/${id}/refunds`, { ...(o.whole ? {} : { amount: part(Math.max(a.balance, 1), o.share) }), reason: 'model' });
    }
    case 'seats': {
      if (!w.plan) {
        const plan = await api('POST', '/v1/plans', { name: 'Seat', code: 'seat', interval_unit: 'month', amount: 99_900, currency: 'INR' });
        w.plan = plan.body.data.id;
      }
      if (!w.subscription) {
        let coupon: string | undefined;
        if (o.coupon) {
          const c = await api('POST', '/v1/coupons', { code: `s${(w.coupons += 1)}`, duration: 'forever', percent_off: 15 });
          coupon = c.body.data.code;
        }
        const sub = await api('POST', '/v1/subscriptions', { customer_id: w.customers[0], plan_id: w.plan, quantity: o.quantity, coupon });
        if (sub.status !== 201) return sub;
        w.subscription = sub.body.data.id;
        if (sub.body.data.latest_invoice_id) w.invoices.push(sub.body.data.latest_invoice_id);
        return sub;
      }
      const res = await api('PATCH', `/v1/subscriptions/${w.subscription}`, {
        quantity: o.quantity,
        proration_behavior: o.prorate ? 'create_prorations' : 'none',
      });
      if (res.status === 200 && res.body.data.invoice) w.invoices.push(res.body.data.invoice.id);
      if (res.status === 200 && res.body.data.credit_note) w.notes.push(res.body.data.credit_note.id);
      return res;
    }
    case 'add_on':
      return addOnStep(w, o);
    case 'commitment':
      return commitmentStep(w, o);
    case 'file':
      return fileStep(w, o);
    case 'group':
      return groupStep(w, o);
  }
}

/** The group op: two children billed to customers[1] (Maharashtra, unregistered), each on a ₹500 monthly plan. */
async function groupStep(w: World, o: Extract<Op, { kind: 'group' }>): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  if (w.group) return parentInvoices(w);
  const plan = await api('POST', '/v1/plans', { name: 'Group', code: 'group', interval_unit: 'month', amount: 50_000, currency: 'INR' });
  const group: { children: string[]; subscriptions: string[] } = { children: [], subscriptions: [] };
  let last: ApiResponse | undefined;
  for (const name of ['North', 'South']) {
    const child = await api('POST', '/v1/customers', {
      email: `${name.toLowerCase()}@model.test`,
      name,
      parent_customer_id: w.customers[1],
      bill_to: 'parent',
    });
    if (child.status !== 201) return child;
    group.children.push(child.body.data.id);
    last = await api('POST', '/v1/subscriptions', { customer_id: child.body.data.id, plan_id: plan.body.data.id, quantity: o.quantity });
    if (last.status !== 201) return last;
    group.subscriptions.push(last.body.data.id);
  }
  w.group = group;
  await parentInvoices(w);
  return last;
}

/**
 * The parent's invoices that bill the children, offered to the other ops (pay, credit, charge…);
 * each line of one must name one of the children and that child's subscription, and the parent is its customer.
 */
async function parentInvoices(w: World): Promise<undefined> {
  if (!w.group) return undefined;
  const res = await w.tenant.api('GET', `/v1/invoices?customer_id=${w.customers[1]}&limit=1000`);
  for (const inv of res.body.data as { id: string; lines: { customer_id: string | null; subscription_id: string | null }[] }[]) {
    const children = inv.lines.filter((l) => l.customer_id !== null);
    if (children.length === 0 || w.invoices.includes(inv.id)) continue;
    for (const line of children) {
      const k = w.group.children.indexOf(line.customer_id!);
      if (k < 0 || w.group.subscriptions[k] !== line.subscription_id)
        throw new Error(`invoice ${inv.id}: a line names ${line.customer_id} / ${line.subscription_id}, not a child billed to the parent`);
    }
    w.invoices.push(inv.id);
  }
  return undefined;
}

/** A return as the API answers it now: the JSON text and the CSV. */
async function returnText(w: World, kind: 'gstr1' | 'gstr3b', entity: string, period: string): Promise<{ json: string; csv: string }> {
  const json = await w.tenant.api('GET', `/v1/gst/${kind}?entity_id=${entity}&period=${period}`);
  const csv = await w.tenant.api('GET', `/v1/gst/${kind}?entity_id=${entity}&period=${period}&format=csv`);
  expect([json.status, csv.status], `${kind} ${period}: ${json.text}`).toEqual([200, 200]);
  return { json: json.text, csv: csv.text };
}

/**
 * The file op: GSTR-1 and/or GSTR-3B of one of the two registered entities, for this month or one
 * or two before (in its zone), marked filed. What the return read just before the filing is what
 * was filed: from then on it must read the same, byte for byte (checkFiledReturns).
 */
async function fileStep(w: World, o: Extract<Op, { kind: 'file' }>): Promise<ApiResponse | undefined> {
  const entity = w.entities[o.entity % 2]!;
  const info = (await w.tenant.api('GET', `/v1/entities/${entity}`)).body.data as { time_zone: string; created_at: string };
  let month = periodOf(t.clock.now(), info.time_zone);
  for (let i = 0; i < o.back; i++) month = previousMonth(month);
  if (month < periodOf(new Date(info.created_at), info.time_zone)) return undefined;
  const period = `${month.slice(5)}${month.slice(0, 4)}`;
  let last: ApiResponse | undefined;
  for (const kind of o.returns === 'both' ? (['gstr1', 'gstr3b'] as const) : [o.returns]) {
    const before = await returnText(w, kind, entity, period);
    last = await w.tenant.api('POST', `/v1/gst/returns/${kind}/${month}/filed`, { entity_id: entity, arn: `AA${period}${kind}` });
    if (last.status !== 200) {
      // Only a second filing of the same return is refused.
      expect(last.body.error?.reason, last.text).toBe('return_already_filed');
      continue;
    }
    w.filed.set(`${kind}|${entity}|${period}`, before);
  }
  return last;
}

function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/** The commitment op: a subscription with a minimum commitment, or its commitment set, replaced or removed. */
async function commitmentStep(w: World, o: Extract<Op, { kind: 'commitment' }>): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  if (!w.plan) {
    const plan = await api('POST', '/v1/plans', { name: 'Seat', code: 'seat', interval_unit: 'month', amount: 99_900, currency: 'INR' });
    w.plan = plan.body.data.id;
  }
  if (!w.subscription) {
    if (o.amount === 0) return undefined;
    const sub = await api('POST', '/v1/subscriptions', { customer_id: w.customers[0], plan_id: w.plan, minimum_commitment: { amount: o.amount } });
    if (sub.status !== 201) return sub;
    w.subscription = sub.body.data.id;
    if (sub.body.data.latest_invoice_id) w.invoices.push(sub.body.data.latest_invoice_id);
    return sub;
  }
  const path = `/v1/subscriptions/${w.subscription}/minimum-commitment`;
  if (o.amount === 0) {
    const res = await api('DELETE', path);
    return res.status === 409 ? undefined : res; // none to remove
  }
  const sub = await api('GET', `/v1/subscriptions/${w.subscription}`);
  if (sub.body.data.status === 'canceled') return undefined;
  return api('PUT', path, { amount: o.amount, price_id: o.perPrice ? sub.body.data.price_id : null });
}

/** The add_on op: the subscription's one add-on (SAC 998315, ₹200) added, changed or removed. */
async function addOnStep(w: World, o: Extract<Op, { kind: 'add_on' }>): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  if (!w.subscription) return undefined;
  if (!w.addOn) {
    const plan = await api('POST', '/v1/plans', {
      name: 'Support',
      code: 'support',
      interval_unit: 'month',
      amount: 20_000,
      currency: 'INR',
      hsn_code: '998315',
    });
    w.addOn = { price: plan.body.data.prices[0].id };
  }
  const proration_behavior = o.prorate ? 'create_prorations' : 'none';
  const items = `/v1/subscriptions/${w.subscription}/items`;
  let res: ApiResponse;
  if (!w.addOn.item) {
    if (o.quantity === 0) return undefined;
    res = await api('POST', items, { price_id: w.addOn.price, quantity: o.quantity, proration_behavior });
    if (res.status === 200) w.addOn.item = res.body.data.item.id;
  } else if (o.quantity === 0) {
    res = await api('DELETE', `${items}/${w.addOn.item}?proration_behavior=${proration_behavior}`);
    if (res.status === 200) w.addOn.item = undefined;
  } else {
    res = await api('PATCH', `${items}/${w.addOn.item}`, { quantity: o.quantity, proration_behavior });
  }
  if (res.status === 200 && res.body.data.invoice) w.invoices.push(res.body.data.invoice.id);
  if (res.status === 200 && res.body.data.credit_note) w.notes.push(res.body.data.credit_note.id);
  return res;
}

/** The test gateway connection whose signed webhooks the model sends, made on first use. */
async function webhookConnection(w: World): Promise<{ connection: string; secret: string } | ApiResponse> {
  if (w.hooks) return w.hooks;
  const secret = 'whsec_model';
  const conn = await w.tenant.api('POST', '/v1/gateway-connections', { provider: 'test', credentials: { webhook_secret: secret }, currencies: ['INR'] });
  if (conn.status !== 201) return conn;
  w.hooks = { connection: conn.body.data.id, secret };
  return w.hooks;
}

/** The gateway operations (see gatewayOp). */
async function gatewayStep(w: World, o: GatewayOp | SettleOp): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  switch (o.kind) {
    case 'charge': {
      let id = o.fresh ? undefined : pick(w.invoices, o.invoice);
      if (!id) {
        const customer = pick(w.customers, o.invoice)!;
        const created = await api('POST', '/v1/invoices', {
          customer_id: customer,
          entity_id: pick(w.entities, o.invoice),
          currency: currencyOf(w, customer),
          lines: [{ description: 'card', unit_amount: o.amount }],
          auto_finalize: true,
        });
        if (created.status !== 201) return created;
        id = created.body.data.id as string;
        w.invoices.push(id);
      }
      const inv = (await api('GET', `/v1/invoices/${id}`)).body.data;
      const key = `${inv.customer_id}:${o.token}`;
      if (!w.cards.has(key)) {
        const saved = await api('POST', `/v1/customers/${inv.customer_id}/payment-methods`, { token: o.token, set_default: false });
        if (saved.status !== 201) return saved;
        w.cards.set(key, saved.body.data.id);
      }
      const before = new Set(((await api('GET', `/v1/payments?invoice_id=${id}`)).body.data as { id: string }[]).map((p) => p.id));
      const res = await api('POST', `/v1/invoices/${id}/pay`, { payment_method_id: w.cards.get(key) });
      // A draft, paid or void invoice is refused (409); a declined card answers 200 with the invoice still open.
      if (res.status === 200) {
        const after = (await api('GET', `/v1/payments?invoice_id=${id}`)).body.data as { id: string }[];
        for (const p of after) if (!before.has(p.id)) w.payments.push(p.id);
        if (o.token === 'tok_chargeDeclined') expect(res.body.data.last_payment_error?.code, 'a declined charge leaves its code').toBe('card_declined');
      }
      if (o.then !== undefined) {
        t.clock.advanceDays(o.then);
        await t.kosh.worker.drain();
      }
      return res;
    }
    case 'gateway_settles':
      // Payouts happen T+2 days after capture (decision 0041); the hourly job moves them to cash.
      t.clock.advance(o.hours * 3_600_000);
      await t.kosh.worker.drain();
      return undefined;
    case 'refund': {
      const id = pick(w.payments, o.payment);
      if (!id) return undefined;
      const payment = (await api('GET', `/v1/payments/${id}`)).body.data;
      const left = payment.amount - payment.amount_refunded;
      const res = await api('POST', `/v1/payments/${id}/refunds`, { ...(o.whole ? {} : { amount: part(Math.max(left, 1), o.share) }), reason: 'model' });
      // The gateway is asked by a job after the commit: pending → processed, or failed (credit given back).
      await t.kosh.worker.drain();
      if (res.status === 201) {
        w.refunds.push(res.body.data.id);
        await checkRefundNote(w, res.body.data, payment);
      }
      return res;
    }
    case 'refund_lines': {
      const id = pick(w.payments, o.payment);
      if (!id) return undefined;
      const payment = (await api('GET', `/v1/payments/${id}`)).body.data;
      if (!payment.invoice_id) return undefined;
      const inv = (await api('GET', `/v1/invoices/${payment.invoice_id}`)).body.data;
      const lines = [...new Set(o.lines.map((i) => pick(inv.lines as { id: string; total: number }[], i)!))];
      const res = await api('POST', `/v1/payments/${id}/refunds`, {
        reason: 'model lines',
        lines: lines.map((l) => ({ invoice_line_id: l.id, amount: part(Math.max(l.total, 1), o.share) })),
      });
      await t.kosh.worker.drain();
      if (res.status === 201) {
        expect(res.body.data.credit_note_issued, 'a refund by lines issues its own note').toBe(true);
        w.refunds.push(res.body.data.id);
        await checkRefundNote(w, res.body.data, payment);
      }
      return res;
    }
    case 'refund_fails_later': {
      const id = pick(w.refunds, o.refund);
      if (!id) return undefined;
      const row = await t.database.db
        .selectFrom('refunds')
        .select(['status', 'gateway', 'gateway_refund_id', 'advance_id'])
        .where('tenant_id', '=', w.tenant.tenantId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row || row.status !== 'succeeded' || row.gateway !== 'test' || !row.gateway_refund_id || row.advance_id) return undefined;
      const hooks = await webhookConnection(w);
      if ('status' in hooks) return hooks;
      const body = JSON.stringify({
        id: `evt_late_${id}`,
        type: 'refund.failed',
        data: { refund_id: row.gateway_refund_id, failure_code: 'expired_or_canceled_card' },
      });
      const res = await t.call({
        method: 'POST',
        url: `/webhooks/gateways/test/${hooks.connection}`,
        headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: signTestWebhook(body, hooks.secret, t.clock.now()) },
        payload: body,
      });
      await t.kosh.worker.drain();
      expect((await api('GET', `/v1/refunds/${id}`)).body.data.status, 'a paid refund the gateway fails later is failed').toBe('failed');
      const reversals = await t.database.db
        .selectFrom('journal_entries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', w.tenant.tenantId)
        .where('reference_id', '=', id)
        .where('kind', '=', 'refund.failed')
        .executeTakeFirstOrThrow();
      expect(Number(reversals.n), 'its refund entry is reversed once').toBe(1);
      return res;
    }
    case 'mismatch': {
      // An INR invoice of the primary entity, a pending card charge, then a signed webhook with the wrong figures.
      if (!w.hooks) {
        const hooks = await webhookConnection(w);
        if ('status' in hooks) return hooks;
      }
      const customer = w.customers[0]!;
      const created = await api('POST', '/v1/invoices', {
        customer_id: customer,
        entity_id: w.entities[0],
        currency: 'INR',
        lines: [{ description: 'pending', unit_amount: o.amount }],
        auto_finalize: true,
      });
      if (created.status !== 201) return created;
      const id = created.body.data.id as string;
      w.invoices.push(id);
      if (created.body.data.amount_due === 0) return created; // paid by the customer's balance
      const key = `${customer}:tok_pending`;
      if (!w.cards.has(key)) {
        const saved = await api('POST', `/v1/customers/${customer}/payment-methods`, { token: 'tok_pending', set_default: false });
        if (saved.status !== 201) return saved;
        w.cards.set(key, saved.body.data.id);
      }
      const paid = await api('POST', `/v1/invoices/${id}/pay`, { payment_method_id: w.cards.get(key) });
      if (paid.status !== 200) return paid;
      const attempt = (await t.database.db
        .selectFrom('payment_attempts')
        .select(['gateway_payment_id', 'amount', 'currency'])
        .where('tenant_id', '=', w.tenant.tenantId)
        .where('invoice_id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst())!;
      if (!attempt?.gateway_payment_id) return paid;
      const send = async (amount: number, currency: string, event: string) => {
        const body = JSON.stringify({ id: event, type: 'payment.succeeded', data: { payment_id: attempt.gateway_payment_id, amount, currency } });
        return t.call({
          method: 'POST',
          url: `/webhooks/gateways/test/${w.hooks!.connection}`,
          headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: signTestWebhook(body, w.hooks!.secret, t.clock.now()) },
          payload: body,
        });
      };
      const wrong = await send(o.wrong === 'amount' ? attempt.amount + 1 : attempt.amount, o.wrong === 'amount' ? attempt.currency : 'USD', `evt_bad_${id}`);
      if (wrong.status >= 500) return wrong;
      await t.kosh.worker.drain();
      const after = (await api('GET', `/v1/invoices/${id}`)).body.data;
      expect(after.status, 'a mismatched webhook pays nothing').toBe('open');
      expect((await api('GET', `/v1/payments?invoice_id=${id}`)).body.data, 'a mismatched webhook records no payment').toEqual([]);
      if (!o.then) return wrong;
      const right = await send(attempt.amount, attempt.currency, `evt_ok_${id}`);
      await t.kosh.worker.drain();
      // The right webhook pays the invoice once. Its payment is not offered to the refund ops: a
      // tok_pending card's refunds also wait for a webhook, which the model does not send.
      expect((await api('GET', `/v1/payments?invoice_id=${id}`)).body.data.length, 'the right webhook pays once').toBe(1);
      return right;
    }
    case 'refund_note': {
      const noteId = pick(w.notes, o.note);
      if (!noteId) return undefined;
      const n = (await api('GET', `/v1/credit-notes/${noteId}`)).body.data;
      const paymentId = o.payment === undefined ? undefined : pick(w.payments, o.payment);
      const res = await api('POST', `/v1/credit-notes/${noteId}/refunds`, {
        amount: part(Math.max(n.balance, 1), o.share),
        ...(paymentId ? { payment_id: paymentId } : {}),
        reason: 'model note',
      });
      await t.kosh.worker.drain();
      if (res.status === 201) {
        w.refunds.push(res.body.data.id);
        expect(res.body.data, 'a note refund issues no note').toMatchObject({ credit_note_issued: false, credit_notes: [{ credit_note_id: noteId }] });
        const after = (await api('GET', `/v1/credit-notes/${noteId}`)).body.data;
        const failed = (await api('GET', `/v1/refunds/${res.body.data.id}`)).body.data.status === 'failed';
        expect(after.balance, "the note's balance falls by the refund (unless the gateway refused it)").toBe(
          failed ? n.balance : n.balance - res.body.data.amount,
        );
      }
      return res;
    }
    case 'settle_refund':
      return settleRefund(w, o);
  }
}

/**
 * The settle_refund op (decision 0570): a pending offline refund the history made — one whose own
 * note is approved (before that nothing is owed) — is marked paid or failed; then a second mark of
 * either kind answers 409 `refund_<status>` and books nothing. With no such refund, any refund of
 * the history is tried: a finished one answers 409 `refund_<status>`, a pending gateway's 409
 * `refund_not_offline`, one waiting for its note's approval 409 `refund_awaiting_approval`.
 */
async function settleRefund(w: World, o: SettleOp): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  let { all, open } = await refundsOf(w);
  if (!open.length || o.fresh) {
    const made = await offlineRefund(w, o);
    if (made && made.status !== 201) return made;
    ({ all, open } = await refundsOf(w));
    if (made) {
      // The refund just made, and only it: open, or (its note awaiting approval) refused as such.
      open = open.filter((r) => r.id === made.body.data.id);
      if (!open.length) all = all.filter((r) => r.id === made.body.data.id);
    }
  }
  const refund = pick(open.length ? open : all, o.refund);
  if (!refund) return undefined;
  const entries = async () =>
    Number(
      (await sql<{ n: string }>`SELECT count(*)::text AS n FROM journal_entries WHERE tenant_id = ${w.tenant.tenantId}`.execute(t.database.db)).rows[0]!.n,
    );
  const path = o.paid ? 'mark_paid' : 'mark_failed';
  const paidAt =
    o.when === undefined
      ? undefined
      : new Date(Date.parse(refund.created_at) + Math.floor(((t.clock.now().getTime() - Date.parse(refund.created_at)) * o.when) / 100)).toISOString();
  const res = await api(
    'POST',
    `/v1/refunds/${refund.id}/${path}`,
    o.paid ? { reference: `UTR-${refund.id.slice(0, 8)}`, ...(paidAt ? { paid_at: paidAt } : {}) } : { failure_message: 'model: cheque returned' },
  );
  if (!open.length) {
    const reason = refund.status !== 'pending' ? `refund_${refund.status}` : refund.gateway !== null ? 'refund_not_offline' : 'refund_awaiting_approval';
    expect({ status: res.status, reason: res.body.error?.reason }, `${path} of a refund that is not a pending offline one`).toEqual({ status: 409, reason });
    return res;
  }
  if (!o.paid && refund.advance_id) {
    // An advance's refund voucher stands: its money stays owed until paid (decision 0740).
    expect({ status: res.status, reason: res.body.error?.reason }, "mark_failed of an advance's refund").toEqual({
      status: 409,
      reason: 'refund_voucher_issued',
    });
    return res;
  }
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  const status = o.paid ? 'succeeded' : 'failed';
  expect(res.body.data.status).toBe(status);
  if (o.paid) expect(res.body.data.paid_at, 'paid_at: as given, or now').toBe(paidAt ?? t.clock.now().toISOString());
  else expect(res.body.data.failure_code).toBe('marked_failed');
  w.settled.set(refund.id, status);
  const booked = await entries();
  const again = await api('POST', `/v1/refunds/${refund.id}/${o.again}`, o.again === 'mark_paid' ? { reference: 'UTR-again' } : {});
  expect({ status: again.status, reason: again.body.error?.reason }, `a second mark (${o.again}) of a ${status} refund`).toEqual({
    status: 409,
    reason: `refund_${status}`,
  });
  expect(await entries(), 'a refused second mark books nothing').toBe(booked);
  return res;
}

type RefundView = {
  id: string;
  status: string;
  gateway: string | null;
  created_at: string;
  credit_note_issued: boolean;
  credit_note_id: string | null;
  advance_id: string | null;
};

/** The history's refunds, and those pending offline whose own note (if any) is not waiting for approval. */
async function refundsOf(w: World): Promise<{ all: RefundView[]; open: RefundView[] }> {
  const api = w.tenant.api;
  // Advances' refunds paid by hand (decision 0740) too: a refund voucher's own, or the one replacing
  // a gateway refund the gateway refused.
  const advanceRefunds = await sql<{ id: string }>`
    SELECT id FROM refunds WHERE tenant_id = ${w.tenant.tenantId} AND advance_id IS NOT NULL ORDER BY created_at, id`.execute(t.database.db);
  const ids = [...new Set([...w.refunds, ...advanceRefunds.rows.map((r) => r.id)])];
  const all = await Promise.all(ids.map(async (id) => (await api('GET', `/v1/refunds/${id}`)).body.data as RefundView));
  const open: RefundView[] = [];
  for (const r of all) {
    if (r.status !== 'pending' || r.gateway !== null) continue;
    const note = r.credit_note_issued ? (await api('GET', `/v1/credit-notes/${r.credit_note_id}`)).body.data : undefined;
    if (note?.status !== 'pending_approval') open.push(r);
  }
  return { all, open };
}

/**
 * An offline refund for settle_refund: `share` of what is left of an offline payment of the history,
 * or (`fresh`, or none left) of a new invoice of `amount` paid offline in full (its invoice and
 * payment join the history). A refund above the invoice's unspent credit is refused (409): fine.
 */
async function offlineRefund(w: World, o: SettleOp): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  const payments = await Promise.all(w.payments.map(async (id) => (await api('GET', `/v1/payments/${id}`)).body.data));
  let payment = o.fresh
    ? undefined
    : pick(
        payments.filter((p) => p.gateway === null && p.amount > p.amount_refunded),
        o.refund,
      );
  if (!payment) {
    const customer = pick(w.customers, o.customer)!;
    const created = await api('POST', '/v1/invoices', {
      customer_id: customer,
      entity_id: pick(w.entities, o.customer),
      currency: currencyOf(w, customer),
      lines: [{ description: 'refunded by hand', unit_amount: o.amount }],
      auto_finalize: true,
    });
    if (created.status !== 201) return created;
    w.invoices.push(created.body.data.id);
    if (created.body.data.amount_due === 0) return undefined; // paid by the customer's balance
    const paid = await api('POST', '/v1/payments/offline', {
      customer_id: customer,
      invoice_id: created.body.data.id,
      payment_type: 'bank_transfer',
      currency: created.body.data.currency,
      amount: created.body.data.amount_due,
    });
    if (paid.status !== 201) return paid;
    w.payments.push(paid.body.data.id);
    payment = paid.body.data;
  }
  const res = await api('POST', `/v1/payments/${payment.id}/refunds`, {
    amount: part(payment.amount - payment.amount_refunded, o.share),
    reason: 'model by hand',
  });
  if (res.status === 201) {
    w.refunds.push(res.body.data.id);
    await checkRefundNote(w, res.body.data, payment);
  }
  return res;
}

/**
 * Offline refunds settled by hand (decision 0570): a refund marked paid or failed stays so (a paid
 * one is never failed after, nor the other way), a paid one has its `paid_at` and exactly one
 * `refund.paid` entry, Dr 2320 / Cr 1000 of its amount, both tagged with its customer, and 2320 leaves
 * at the rupee value `refund.created` booked it at; a failed one has no `refund.paid`.
 */
async function checkSettledRefunds(w: World): Promise<void> {
  const db = t.database.db;
  for (const [id, status] of w.settled) {
    const r = (await w.tenant.api('GET', `/v1/refunds/${id}`)).body.data;
    expect(r.status, `refund ${id} marked ${status} stays ${status}`).toBe(status);
  }
  const rows = await sql<{
    id: string;
    status: string;
    amount: string;
    paid_at: Date | null;
    paid: string;
    debit: string;
    credit: string;
    tagged: string;
    owed: string | null;
    left: string | null;
  }>`
    SELECT r.id, r.status, r.amount::text, r.paid_at,
      (SELECT count(*) FROM journal_entries e WHERE e.tenant_id = r.tenant_id AND e.kind = 'refund.paid' AND e.reference_id = r.id)::text AS paid,
      (SELECT coalesce(sum(l.debit), 0) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = r.tenant_id AND e.kind = 'refund.paid' AND e.reference_id = r.id AND l.account_code = 2320)::text AS debit,
      (SELECT coalesce(sum(l.credit), 0) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = r.tenant_id AND e.kind = 'refund.paid' AND e.reference_id = r.id AND l.account_code = 1000)::text AS credit,
      (SELECT count(*) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = r.tenant_id AND e.kind = 'refund.paid' AND e.reference_id = r.id AND l.account_code IN (1000, 2320)
          AND l.customer_id IS DISTINCT FROM r.customer_id)::text AS tagged,
      -- What 2320 holds for it: refund.created; an advance's refund voucher (advance.refunded of its
      -- movement); the refund.failed of the gateway refund it replaces (decision 0740).
      (SELECT sum(l.functional_credit) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = r.tenant_id AND l.account_code = 2320
          AND ((r.replaces_refund_id IS NULL AND r.advance_id IS NULL AND e.kind = 'refund.created' AND e.reference_id = r.id)
            OR (r.replaces_refund_id IS NULL AND r.advance_id IS NOT NULL AND e.kind = 'advance.refunded'
                AND e.reference_id IN (SELECT m.id FROM advance_movements m WHERE m.tenant_id = r.tenant_id AND m.refund_id = r.id))
            OR (e.kind = 'refund.failed' AND e.reference_id = r.replaces_refund_id)))::text AS owed,
      (SELECT sum(l.functional_debit) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = r.tenant_id AND e.kind = 'refund.paid' AND e.reference_id = r.id AND l.account_code = 2320)::text AS left
    FROM refunds r WHERE r.tenant_id = ${w.tenant.tenantId} AND r.gateway IS NULL`.execute(db);
  for (const r of rows.rows) {
    if (r.status === 'succeeded') {
      expect(r.paid_at, `paid refund ${r.id} has paid_at`).not.toBeNull();
      expect({ entries: Number(r.paid), debit: Number(r.debit), credit: Number(r.credit), untagged: Number(r.tagged) }, `refund.paid of ${r.id}`).toEqual({
        entries: 1,
        debit: Number(r.amount),
        credit: Number(r.amount),
        untagged: 0,
      });
      expect(r.left, `refund ${r.id}: 2320 leaves at the value it was booked at`).toBe(r.owed);
    } else {
      expect(Number(r.paid), `refund ${r.id} (${r.status}) has no refund.paid`).toBe(0);
    }
  }
}

/** A payment refund's notes: its own refund note (whose refund_status follows the gateway), or notes it paid out. */
async function checkRefundNote(w: World, refund: { credit_note_id: string; credit_note_issued: boolean }, payment: { gateway: string | null }): Promise<void> {
  const note = (await w.tenant.api('GET', `/v1/credit-notes/${refund.credit_note_id}`)).body.data;
  if (!refund.credit_note_issued) return;
  expect(note.type).toBe('refund');
  // Under governance the note (and the refund) waits for approval: the approve op may decide it; a
  // refund the gateway refused leaves its note spendable: the other ops may apply or refund it.
  w.notes.push(note.id);
  const expected =
    note.status === 'pending_approval'
      ? [payment.gateway ? 'pending' : 'manual_required']
      : payment.gateway
        ? ['processed', 'refund_failed']
        : ['manual_required'];
  expect(expected, `refund_status of a refund of a ${payment.gateway ?? 'offline'} payment (note ${note.status})`).toContain(note.refund_status);
}

/** Check 3 with gateway payments and refunds: cash, gateway clearing and refunds payable per currency. */
async function checkGatewayMoney(tenantId: string): Promise<void> {
  const db = t.database.db;
  const money = await sql<{
    currency: string;
    cash: number;
    clearing: number;
    payable: number;
    offline: number;
    settled: number;
    unsettled: number;
    refunded: number;
    manual: number;
  }>`
    WITH c AS (SELECT DISTINCT currency FROM payments WHERE tenant_id = ${tenantId}
               UNION SELECT DISTINCT currency FROM journal_entries WHERE tenant_id = ${tenantId}),
    bal AS (SELECT e.currency, l.account_code, sum(l.debit) - sum(l.credit) AS balance
            FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
            WHERE l.tenant_id = ${tenantId} AND l.account_code IN (1000, 1050, 2320) GROUP BY e.currency, l.account_code),
    -- Refunds booked: not failed, and not waiting for their note's approval (nothing is booked before).
    -- An advance's gateway refund (no note) is booked with its refund voucher.
    released AS (SELECT r.currency, r.gateway, r.amount, r.status FROM refunds r LEFT JOIN credit_notes n ON n.tenant_id = r.tenant_id AND n.id = r.credit_note_id
                 WHERE r.tenant_id = ${tenantId} AND r.status <> 'failed' AND (r.advance_id IS NOT NULL OR n.status <> 'pending_approval'))
    SELECT c.currency,
      coalesce((SELECT balance FROM bal WHERE bal.currency = c.currency AND account_code = 1000), 0)::bigint AS cash,
      coalesce((SELECT balance FROM bal WHERE bal.currency = c.currency AND account_code = 1050), 0)::bigint AS clearing,
      coalesce((SELECT -balance FROM bal WHERE bal.currency = c.currency AND account_code = 2320), 0)::bigint AS payable,
      (SELECT coalesce(sum(amount), 0) FROM payments WHERE tenant_id = ${tenantId} AND currency = c.currency AND gateway IS NULL)::bigint
      -- Offline refunds paid out by hand (decision 0570) left cash.
      - (SELECT coalesce(sum(r.amount), 0) FROM released r WHERE r.currency = c.currency AND r.gateway IS NULL AND r.status = 'succeeded')::bigint AS offline,
      (SELECT coalesce(sum(amount), 0) FROM payments WHERE tenant_id = ${tenantId} AND currency = c.currency AND gateway IS NOT NULL AND settled_at IS NOT NULL)::bigint AS settled,
      (SELECT coalesce(sum(amount), 0) FROM payments WHERE tenant_id = ${tenantId} AND currency = c.currency AND gateway IS NOT NULL AND settled_at IS NULL)::bigint AS unsettled,
      (SELECT coalesce(sum(r.amount), 0) FROM released r WHERE r.currency = c.currency AND r.gateway IS NOT NULL)::bigint AS refunded,
      -- Pending offline refunds: of notes' credit, of advances' refund vouchers paid by hand, and
      -- those replacing an advance's gateway refund the gateway refused (decision 0740).
      (SELECT coalesce(sum(r.amount), 0) FROM released r WHERE r.currency = c.currency AND r.gateway IS NULL AND r.status = 'pending')::bigint AS manual
    FROM c`.execute(db);
  for (const m of money.rows) {
    expect(Number(m.cash), `cash in ${m.currency} = offline payments − offline refunds marked paid + settled gateway payments`).toBe(
      Number(m.offline) + Number(m.settled),
    );
    expect(Number(m.clearing), `gateway clearing in ${m.currency} = unsettled gateway payments − gateway refunds not failed`).toBe(
      Number(m.unsettled) - Number(m.refunded),
    );
    expect(Number(m.payable), `refunds payable in ${m.currency} = pending offline refunds (advances' by hand among them)`).toBe(Number(m.manual));
  }
  const overRefunded = await sql<{ id: string }>`
    SELECT p.id FROM payments p
    WHERE p.tenant_id = ${tenantId}
      AND (p.amount < (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.tenant_id = p.tenant_id AND r.payment_id = p.id AND r.status <> 'failed')
        OR p.amount_refunded <> (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.tenant_id = p.tenant_id AND r.payment_id = p.id AND r.status <> 'failed'))`.execute(
    db,
  );
  expect(overRefunded.rows, "a payment's live refunds never exceed it and match amount_refunded").toEqual([]);
  const attempts = await sql<{ id: string }>`
    SELECT a.id FROM payment_attempts a
    WHERE a.tenant_id = ${tenantId} AND ((a.status = 'succeeded') <> EXISTS (SELECT 1 FROM payments p WHERE p.tenant_id = a.tenant_id AND p.attempt_id = a.id))`.execute(
    db,
  );
  expect(attempts.rows, 'a succeeded attempt has exactly its one payment, any other none').toEqual([]);
}

/** Checks 15 and 16: refunds by line and by a note's balance never reverse tax twice, and the customers' money ties out. */
async function checkRefunds(tenantId: string): Promise<void> {
  const db = t.database.db;
  const overLine = await sql<{ id: string }>`
    SELECT il.id FROM invoice_lines il
    JOIN credit_note_lines cl ON cl.tenant_id = il.tenant_id AND cl.invoice_line_id = il.id
    JOIN credit_notes n ON n.tenant_id = cl.tenant_id AND n.id = cl.credit_note_id AND n.status NOT IN ('void', 'rejected')
    WHERE il.tenant_id = ${tenantId}
    GROUP BY il.id, il.amount, il.cgst_amount, il.sgst_amount, il.igst_amount
    HAVING sum(cl.subtotal) > il.amount OR sum(cl.cgst_amount) > il.cgst_amount
        OR sum(cl.sgst_amount) > il.sgst_amount OR sum(cl.igst_amount) > il.igst_amount`.execute(db);
  expect(overLine.rows, 'output tax reversed never exceeds what each invoice line charged').toEqual([]);
  const reversals = await sql<{ id: string; booked: string; notes: string }>`
    SELECT i.id,
      (SELECT coalesce(sum(l.debit - l.credit), 0) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = i.tenant_id AND l.invoice_id = i.id AND l.account_code IN (2100, 2110, 2120)
          AND e.kind IN ('credit_note.issued', 'credit_note.voided'))::text AS booked,
      (SELECT coalesce(sum(n.tax_amount), 0) FROM credit_notes n
        WHERE n.tenant_id = i.tenant_id AND n.invoice_id = i.id AND n.status NOT IN ('void', 'rejected', 'pending_approval'))::text AS notes
    FROM invoices i WHERE i.tenant_id = ${tenantId}`.execute(db);
  for (const r of reversals.rows) expect(Number(r.booked), `output tax reversed for invoice ${r.id} = its live notes' tax`).toBe(Number(r.notes));
  const refundTouchesTax = await sql<{ entry_id: string }>`
    SELECT l.entry_id FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId} AND e.kind LIKE 'refund.%' AND l.account_code NOT IN (2300, 1050, 2320, 4300, 4390)
      -- A payout by hand (decision 0570) moves cash. A foreign refund may carry a functional-only
      -- exchange difference (4300, rounding 4390): the note's credit leaves 2300 at the rate it was
      -- booked at, refunds payable is valued at the refund's rate (decision 0290).
      AND NOT (e.kind = 'refund.paid' AND l.account_code = 1000)`.execute(db);
  expect(refundTouchesTax.rows, 'a refund entry moves only customer credit, money and exchange differences: never tax or revenue').toEqual([]);

  // Per customer and currency: payments received − refunds booked (not failed, not waiting for
  // their own note's approval) = cash + gateway clearing − refunds payable tagged with the customer.
  const money = await sql<{ customer_id: string; currency: string; ledger: string; paid: string; refunded: string }>`
    WITH l AS (SELECT l.customer_id, e.currency, sum(l.debit - l.credit) AS net FROM journal_lines l
               JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
               WHERE l.tenant_id = ${tenantId} AND l.account_code IN (1000, 1050, 2320) GROUP BY l.customer_id, e.currency),
    p AS (SELECT customer_id, currency, sum(amount) AS paid FROM payments WHERE tenant_id = ${tenantId} GROUP BY customer_id, currency),
    r AS (SELECT r.customer_id, r.currency, sum(r.amount) AS refunded FROM refunds r
          JOIN credit_notes n ON n.tenant_id = r.tenant_id AND n.id = r.credit_note_id
          WHERE r.tenant_id = ${tenantId} AND r.status <> 'failed' AND NOT (r.issued_credit_note AND n.status = 'pending_approval')
          GROUP BY r.customer_id, r.currency
          UNION ALL
          SELECT a.customer_id, a.currency, sum(m.amount) FROM advance_movements m
          JOIN customer_advances a ON a.tenant_id = m.tenant_id AND a.id = m.advance_id
          WHERE m.tenant_id = ${tenantId} AND m.kind = 'refunded' GROUP BY a.customer_id, a.currency),
    k AS (SELECT customer_id, currency FROM l UNION SELECT customer_id, currency FROM p UNION SELECT customer_id, currency FROM r)
    SELECT k.customer_id, k.currency,
      coalesce((SELECT net FROM l WHERE l.customer_id IS NOT DISTINCT FROM k.customer_id AND l.currency = k.currency), 0)::text AS ledger,
      coalesce((SELECT paid FROM p WHERE p.customer_id = k.customer_id AND p.currency = k.currency), 0)::text AS paid,
      coalesce((SELECT sum(refunded) FROM r WHERE r.customer_id = k.customer_id AND r.currency = k.currency), 0)::text AS refunded
    FROM k`.execute(db);
  for (const m of money.rows) {
    expect(Number(m.ledger), `customer ${m.customer_id}: cash received − refunded in ${m.currency} = the ledger's money tagged with the customer`).toBe(
      Number(m.paid) - Number(m.refunded),
    );
  }
}

/** Invariants 17–19: the INR books (see the top). */
async function checkFunctionalBooks(tenantId: string): Promise<void> {
  const db = t.database.db;
  const unbalanced = await sql<{ entry_id: string; unvalued: number; difference: number }>`
    SELECT entry_id, count(*) FILTER (WHERE functional_debit IS NULL)::int AS unvalued,
           (coalesce(sum(functional_debit), 0) - coalesce(sum(functional_credit), 0))::bigint AS difference
    FROM journal_lines WHERE tenant_id = ${tenantId}
    GROUP BY entry_id HAVING count(*) FILTER (WHERE functional_debit IS NULL) > 0 OR sum(functional_debit) <> sum(functional_credit)`.execute(db);
  expect(unbalanced.rows, 'every entry is valued and balances in INR').toEqual([]);

  const finalized = await sql<{ id: string; currency: string; total: number; exchange_rate: string; inr_total: number | null; booked: number }>`
    SELECT i.id, i.currency, i.total, i.exchange_rate, i.inr_total,
           (SELECT sum(l.functional_debit) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
             WHERE l.tenant_id = i.tenant_id AND e.kind = 'invoice.finalized' AND e.reference_id = i.id AND l.account_code = 1100)::bigint AS booked
    FROM invoices i WHERE i.tenant_id = ${tenantId} AND i.number IS NOT NULL AND i.currency <> 'INR' AND i.total > 0`.execute(db);
  for (const r of finalized.rows) {
    expect(r.exchange_rate, `invoice ${r.id} has a rate`).not.toBeNull();
    const value = r.inr_total === null ? convertMinorUnits(Number(r.total), r.currency, 'INR', r.exchange_rate) : Number(r.inr_total);
    expect(Number(r.booked), `receivable of ${r.currency} invoice ${r.id} in INR`).toBe(value);
  }

  const money = await sql<{ id: string; currency: string; exchange_rate: string; amount: number; functional: number }>`
    SELECT l.id, e.currency, e.exchange_rate, (l.debit + l.credit)::bigint AS amount,
           (l.functional_debit + l.functional_credit)::bigint AS functional
    FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId} AND e.currency <> e.functional_currency AND l.account_code IN (1000, 1050, 2320)
      -- A payout by hand takes 2320 out at the value refund.created booked (checkSettledRefunds).
      AND NOT (e.kind = 'refund.paid' AND l.account_code = 2320)`.execute(db);
  for (const r of money.rows) {
    expect(Number(r.functional), `money line ${r.id}: ${r.amount} ${r.currency} at ${r.exchange_rate}`).toBe(
      convertMinorUnits(Number(r.amount), r.currency, 'INR', r.exchange_rate),
    );
  }

  const settled = await sql<{ id: string; kind: string; amount: number; functional: number }>`
    SELECT i.id, 'invoice' AS kind,
           coalesce((SELECT sum(l.debit) - sum(l.credit) FROM journal_lines l WHERE l.tenant_id = i.tenant_id AND l.invoice_id = i.id AND l.account_code = 1100), 0)::bigint AS amount,
           coalesce((SELECT sum(l.functional_debit) - sum(l.functional_credit) FROM journal_lines l WHERE l.tenant_id = i.tenant_id AND l.invoice_id = i.id AND l.account_code = 1100), 0)::bigint AS functional
    FROM invoices i WHERE i.tenant_id = ${tenantId} AND i.status IN ('paid', 'void')
    UNION ALL
    SELECT n.id, 'credit note',
           coalesce((SELECT sum(l.credit) - sum(l.debit) FROM journal_lines l WHERE l.tenant_id = n.tenant_id AND l.credit_note_id = n.id AND l.account_code = 2300), 0)::bigint,
           coalesce((SELECT sum(l.functional_credit) - sum(l.functional_debit) FROM journal_lines l WHERE l.tenant_id = n.tenant_id AND l.credit_note_id = n.id AND l.account_code = 2300), 0)::bigint
    FROM credit_notes n WHERE n.tenant_id = ${tenantId} AND n.balance = 0 AND n.status <> 'pending_approval'`.execute(db);
  for (const r of settled.rows) {
    expect({ amount: Number(r.amount), functional: Number(r.functional) }, `${r.kind} ${r.id} settled: nothing left in either currency`).toEqual({
      amount: 0,
      functional: 0,
    });
  }

  const exchangeOnly = await sql<{ id: string; account_code: number }>`
    SELECT l.id, l.account_code FROM journal_lines l
    JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId} AND l.debit = 0 AND l.credit = 0 AND l.account_code NOT IN (4300, 4390, 2100, 2110, 2120)
      AND NOT (e.kind IN ('fx.revaluation', 'fx.revaluation_reversed') AND l.account_code IN (1100, 4310))`.execute(db);
  expect(exchangeOnly.rows, 'only exchange differences, revaluations (and INR paise of tax) have no transaction amount').toEqual([]);
}

/** Checks 20 and 21: each advance adds up, and 2310 and 1300 per customer are the advances' balances and open tax. */
async function checkAdvances(tenantId: string): Promise<void> {
  const db = t.database.db;
  const inconsistent = await sql<{ id: string }>`
    SELECT a.id FROM customer_advances a
    LEFT JOIN advance_movements m ON m.tenant_id = a.tenant_id AND m.advance_id = a.id
    WHERE a.tenant_id = ${tenantId}
    GROUP BY a.id, a.amount, a.balance, a.subtotal, a.cgst_amount, a.sgst_amount, a.igst_amount, a.open_subtotal, a.open_cgst, a.open_sgst, a.open_igst
    HAVING a.balance <> a.amount - coalesce(sum(m.amount), 0)
        OR a.open_subtotal <> a.subtotal - coalesce(sum(m.subtotal), 0)
        OR a.open_cgst <> a.cgst_amount - coalesce(sum(m.cgst_amount), 0)
        OR a.open_sgst <> a.sgst_amount - coalesce(sum(m.sgst_amount), 0)
        OR a.open_igst <> a.igst_amount - coalesce(sum(m.igst_amount), 0)
        OR a.open_cgst < 0 OR a.open_sgst < 0 OR a.open_igst < 0 OR a.open_subtotal < 0
        OR (a.balance = 0 AND a.open_cgst + a.open_sgst + a.open_igst <> 0)`.execute(db);
  expect(inconsistent.rows, "an advance's balance, value and tax are its voucher's less its uses, never below zero").toEqual([]);
  // Check 24: the rupee values of a foreign-currency advance add up as its own do (decision 0400).
  const rupees = await sql<{ id: string }>`
    SELECT a.id FROM customer_advances a
    LEFT JOIN advance_movements m ON m.tenant_id = a.tenant_id AND m.advance_id = a.id
    WHERE a.tenant_id = ${tenantId} AND a.inr_amount IS NOT NULL
    GROUP BY a.id, a.inr_amount, a.inr_subtotal, a.inr_cgst_amount, a.inr_sgst_amount, a.inr_igst_amount, a.balance,
             a.open_inr_subtotal, a.open_inr_cgst, a.open_inr_sgst, a.open_inr_igst
    HAVING a.inr_amount <> a.inr_subtotal + a.inr_cgst_amount + a.inr_sgst_amount + a.inr_igst_amount
        OR a.open_inr_subtotal <> a.inr_subtotal - coalesce(sum(m.inr_subtotal), 0)
        OR a.open_inr_cgst <> a.inr_cgst_amount - coalesce(sum(m.inr_cgst_amount), 0)
        OR a.open_inr_sgst <> a.inr_sgst_amount - coalesce(sum(m.inr_sgst_amount), 0)
        OR a.open_inr_igst <> a.inr_igst_amount - coalesce(sum(m.inr_igst_amount), 0)
        OR a.open_inr_subtotal < 0 OR a.open_inr_cgst < 0 OR a.open_inr_sgst < 0 OR a.open_inr_igst < 0
        OR (a.balance = 0 AND a.open_inr_cgst + a.open_inr_sgst + a.open_inr_igst + a.open_inr_subtotal <> 0)`.execute(db);
  expect(rupees.rows, "an advance's rupee value and tax are its voucher's less its uses' rupee shares, all taken when it is used up").toEqual([]);
  const ledger = await sql<{
    customer_id: string;
    currency: string;
    advances: string;
    tax: string;
    inr_tax: string;
    balance: string;
    open_tax: string;
    open_inr_tax: string;
  }>`
    WITH l AS (SELECT l.customer_id, e.currency,
                 sum(l.credit - l.debit) FILTER (WHERE l.account_code = 2310) AS advances,
                 sum(l.debit - l.credit) FILTER (WHERE l.account_code = 1300) AS tax,
                 sum(coalesce(l.functional_debit, 0) - coalesce(l.functional_credit, 0)) FILTER (WHERE l.account_code = 1300) AS inr_tax
               FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
               WHERE l.tenant_id = ${tenantId} AND l.account_code IN (2310, 1300) GROUP BY l.customer_id, e.currency),
    a AS (SELECT customer_id, currency, sum(balance) AS balance, sum(open_cgst + open_sgst + open_igst) AS open_tax,
                 sum(CASE WHEN currency = 'INR' THEN open_cgst + open_sgst + open_igst ELSE coalesce(open_inr_cgst + open_inr_sgst + open_inr_igst, 0) END) AS open_inr_tax
          -- A top-up's voucher books its tax out of prepaid credit (2330), not 1300 (decision 0700).
          FROM customer_advances WHERE tenant_id = ${tenantId} AND credit_grant_id IS NULL GROUP BY customer_id, currency),
    k AS (SELECT customer_id, currency FROM l UNION SELECT customer_id, currency FROM a)
    SELECT k.customer_id, k.currency,
      coalesce((SELECT advances FROM l WHERE l.customer_id IS NOT DISTINCT FROM k.customer_id AND l.currency = k.currency), 0)::text AS advances,
      coalesce((SELECT tax FROM l WHERE l.customer_id IS NOT DISTINCT FROM k.customer_id AND l.currency = k.currency), 0)::text AS tax,
      coalesce((SELECT balance FROM a WHERE a.customer_id = k.customer_id AND a.currency = k.currency), 0)::text AS balance,
      coalesce((SELECT open_tax FROM a WHERE a.customer_id = k.customer_id AND a.currency = k.currency), 0)::text AS open_tax,
      coalesce((SELECT inr_tax FROM l WHERE l.customer_id IS NOT DISTINCT FROM k.customer_id AND l.currency = k.currency), 0)::text AS inr_tax,
      coalesce((SELECT open_inr_tax FROM a WHERE a.customer_id = k.customer_id AND a.currency = k.currency), 0)::text AS open_inr_tax
    FROM k`.execute(db);
  for (const r of ledger.rows) {
    expect(Number(r.advances), `customer ${r.customer_id}: customer advances (2310) in ${r.currency} = the advances' balances`).toBe(Number(r.balance));
    expect(Number(r.tax), `customer ${r.customer_id}: GST paid on advances (1300) in ${r.currency} = the tax on their balances`).toBe(Number(r.open_tax));
    expect(Number(r.inr_tax), `customer ${r.customer_id}: GST paid on ${r.currency} advances (1300) in rupees = the rupee tax on their balances`).toBe(
      Number(r.open_inr_tax),
    );
  }
  // The statement and the balance agree with the records (decision 0281).
  const statement = await sql<{ customer_id: string }>`
    SELECT c.id AS customer_id FROM customers c
    WHERE c.tenant_id = ${tenantId} AND
      coalesce((SELECT sum(amount) FROM customer_balance_transactions v WHERE v.tenant_id = c.tenant_id AND v.customer_id = c.id AND v.source = 'advances'), 0)
        <> coalesce((SELECT sum(balance) FROM customer_advances a WHERE a.tenant_id = c.tenant_id AND a.customer_id = c.id AND a.credit_grant_id IS NULL), 0)`.execute(
    db,
  );
  expect(statement.rows, "the balance statement's advances add up to the advances' balances").toEqual([]);
}

async function checkInvariants(tenantId: string): Promise<void> {
  await checkFunctionalBooks(tenantId);
  const db = t.database.db;
  const unbalanced = await sql<{ entry_id: string }>`
    SELECT entry_id FROM journal_lines WHERE tenant_id = ${tenantId}
    GROUP BY entry_id HAVING sum(debit) <> sum(credit)`.execute(db);
  expect(unbalanced.rows, 'every journal entry balances').toEqual([]);

  const receivables = await sql<{ id: string; status: string; amount_due: number; ledger: number }>`
    SELECT i.id, i.status, i.amount_due,
           coalesce((SELECT sum(l.debit) - sum(l.credit) FROM journal_lines l
                     WHERE l.tenant_id = i.tenant_id AND l.invoice_id = i.id AND l.account_code = 1100), 0)::bigint AS ledger
    FROM invoices i WHERE i.tenant_id = ${tenantId}`.execute(db);
  for (const r of receivables.rows) {
    const expected = r.status === 'draft' || r.status === 'void' ? 0 : r.amount_due;
    expect(Number(r.ledger), `receivables of invoice ${r.id} (${r.status})`).toBe(expected);
    expect(r.amount_due).toBeGreaterThanOrEqual(0);
  }

  // Per currency: cash in rupees and cash in dollars are two balances, never one sum. Cash,
  // clearing and refunds are checkGatewayMoney's; here TDS receivable.
  await checkGatewayMoney(tenantId);
  await checkRefunds(tenantId);
  await checkAdvances(tenantId);
  const money = await sql<{ currency: string; tds: number; withheld: number }>`
    WITH c AS (SELECT DISTINCT currency FROM payments WHERE tenant_id = ${tenantId}
               UNION SELECT DISTINCT currency FROM journal_entries WHERE tenant_id = ${tenantId})
    SELECT c.currency,
      (SELECT coalesce(sum(l.debit) - sum(l.credit), 0) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = ${tenantId} AND l.account_code = 1000 AND e.currency = c.currency)::bigint AS cash,
      (SELECT coalesce(sum(l.debit) - sum(l.credit), 0) FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = ${tenantId} AND l.account_code = 1200 AND e.currency = c.currency)::bigint AS tds,
      (SELECT coalesce(sum(amount), 0) FROM payments WHERE tenant_id = ${tenantId} AND currency = c.currency)::bigint AS paid,
      (SELECT coalesce(sum(tds_amount), 0) FROM payments WHERE tenant_id = ${tenantId} AND currency = c.currency)::bigint AS withheld
    FROM c`.execute(db);
  for (const m of money.rows) {
    expect(Number(m.tds), `TDS receivable in ${m.currency} equals TDS recorded in ${m.currency}`).toBe(Number(m.withheld));
  }

  const mixed = await sql<{ entry_id: string }>`
    SELECT DISTINCT l.entry_id FROM journal_lines l
    JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    LEFT JOIN invoices i ON i.tenant_id = l.tenant_id AND i.id = l.invoice_id
    LEFT JOIN credit_notes c ON c.tenant_id = l.tenant_id AND c.id = l.credit_note_id
    WHERE l.tenant_id = ${tenantId} AND (i.currency <> e.currency OR c.currency <> e.currency)`.execute(db);
  expect(mixed.rows, 'every line of an entry is in the entry currency').toEqual([]);
  const perCurrency = await sql<{ ledger_id: number; currency: string }>`
    SELECT e.ledger_id, e.currency FROM journal_lines l
    JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId}
    GROUP BY e.ledger_id, e.currency HAVING sum(l.debit) <> sum(l.credit)`.execute(db);
  expect(perCurrency.rows, 'each ledger balances in each currency on its own').toEqual([]);

  const perInvoice = await sql<{ id: string; subtotal: number; revenue: number; reversed: number; cgst: number; sgst: number; igst: number }>`
    SELECT i.id, i.subtotal,
      coalesce(sum(l.credit - l.debit) FILTER (WHERE l.account_code = 4000), 0)::bigint AS revenue,
      coalesce(sum(l.debit - l.credit) FILTER (WHERE l.account_code = 4900), 0)::bigint AS reversed,
      coalesce(sum(l.credit - l.debit) FILTER (WHERE l.account_code = 2100), 0)::bigint AS cgst,
      coalesce(sum(l.credit - l.debit) FILTER (WHERE l.account_code = 2110), 0)::bigint AS sgst,
      coalesce(sum(l.credit - l.debit) FILTER (WHERE l.account_code = 2120), 0)::bigint AS igst
    FROM invoices i LEFT JOIN journal_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id
    WHERE i.tenant_id = ${tenantId}
    GROUP BY i.id, i.subtotal`.execute(db);
  for (const r of perInvoice.rows) {
    for (const tax of ['cgst', 'sgst', 'igst'] as const) {
      expect(Number(r[tax]), `${tax.toUpperCase()} payable of invoice ${r.id} never ends negative`).toBeGreaterThanOrEqual(0);
    }
    expect(Number(r.reversed), `revenue reversed for invoice ${r.id} never exceeds its revenue`).toBeLessThanOrEqual(Number(r.revenue));
  }

  const badLines = await sql<{ id: string }>`
    SELECT id FROM invoice_lines WHERE tenant_id = ${tenantId}
      AND (discount_amount < 0 OR amount < 0 OR amount <> quantity * unit_amount - discount_amount)`.execute(db);
  expect(badLines.rows, 'a line is quantity × unit_amount − discount, never below zero').toEqual([]);
  const discounts = await sql<{ id: string }>`
    SELECT i.id FROM invoices i JOIN invoice_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id
    WHERE i.tenant_id = ${tenantId}
    GROUP BY i.id, i.discount_amount, i.subtotal HAVING sum(l.discount_amount) <> i.discount_amount OR sum(l.amount) <> i.subtotal`.execute(db);
  expect(discounts.rows, "an invoice's discount and subtotal are its lines'").toEqual([]);
  const netRevenue = await sql<{ id: string }>`
    SELECT i.id FROM invoices i
    JOIN journal_entries e ON e.tenant_id = i.tenant_id AND e.reference_id = i.id AND e.kind = 'invoice.finalized'
    JOIN journal_lines l ON l.tenant_id = e.tenant_id AND l.entry_id = e.id AND l.account_code = 4000
    WHERE i.tenant_id = ${tenantId}
    GROUP BY i.id, i.subtotal HAVING sum(l.credit) - sum(l.debit) <> i.subtotal`.execute(db);
  expect(netRevenue.rows, 'the finalization entry credits revenue with the net subtotal').toEqual([]);

  const unsettled = await sql<{ id: string; invoice_id: string }>`
    SELECT c.id, c.invoice_id FROM credit_notes c
    JOIN invoices i ON i.tenant_id = c.tenant_id AND i.id = c.invoice_id
    WHERE c.tenant_id = ${tenantId} AND c.status IN ('issued', 'used', 'expired')
      AND i.status IN ('open', 'uncollectible') AND i.amount_due > 0
      AND (c.balance > 0 OR c.status = 'expired' OR EXISTS (
        SELECT 1 FROM credit_note_applications a WHERE a.tenant_id = c.tenant_id AND a.credit_note_id = c.id AND a.invoice_id <> c.invoice_id))`.execute(db);
  expect(unsettled.rows, "a tied note's credit settles its own invoice first").toEqual([]);

  const credits = await sql<{ id: string; status: string; balance: number; ledger: number }>`
    SELECT c.id, c.status, c.balance,
           coalesce((SELECT sum(l.credit) - sum(l.debit) FROM journal_lines l
                     WHERE l.tenant_id = c.tenant_id AND l.credit_note_id = c.id AND l.account_code = 2300), 0)::bigint AS ledger
    FROM credit_notes c WHERE c.tenant_id = ${tenantId}`.execute(db);
  for (const c of credits.rows) {
    const expected = c.status === 'pending_approval' || c.status === 'rejected' ? 0 : c.balance;
    expect(Number(c.ledger), `customer credit of note ${c.id} (${c.status})`).toBe(expected);
  }

  const overCredited = await sql<{ id: string }>`
    SELECT i.id FROM invoices i
    JOIN credit_notes c ON c.tenant_id = i.tenant_id AND c.invoice_id = i.id AND c.status NOT IN ('void', 'rejected')
    WHERE i.tenant_id = ${tenantId}
    GROUP BY i.id, i.subtotal, i.cgst_amount, i.sgst_amount, i.igst_amount
    HAVING sum(c.subtotal) > i.subtotal OR sum(c.cgst_amount) > i.cgst_amount
        OR sum(c.sgst_amount) > i.sgst_amount OR sum(c.igst_amount) > i.igst_amount`.execute(db);
  expect(overCredited.rows, 'credit notes never reverse more of a component than the invoice charged').toEqual([]);

  const unregisteredTax = await sql<{ id: string }>`
    SELECT l.entry_id AS id FROM journal_lines l
    JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    JOIN legal_entities le ON le.tenant_id = e.tenant_id AND le.id = e.entity_id
    WHERE l.tenant_id = ${tenantId} AND le.gstin IS NULL AND l.account_code IN (2100, 2110, 2120)
    UNION ALL
    SELECT i.id FROM invoices i JOIN legal_entities le ON le.tenant_id = i.tenant_id AND le.id = i.entity_id
    WHERE i.tenant_id = ${tenantId} AND le.gstin IS NULL AND (i.tax_amount <> 0 OR i.tax_type <> '')
    UNION ALL
    SELECT c.id FROM credit_notes c JOIN legal_entities le ON le.tenant_id = c.tenant_id AND le.id = c.entity_id
    WHERE c.tenant_id = ${tenantId} AND le.gstin IS NULL AND c.tax_amount <> 0`.execute(db);
  expect(unregisteredTax.rows, 'an entity without a GSTIN posts and charges no GST').toEqual([]);

  const registrable = await sql<{ type: 'invoice' | 'credit_note'; id: string }>`
    SELECT 'invoice' AS type, id FROM invoices
    WHERE tenant_id = ${tenantId} AND number IS NOT NULL AND tax_type <> '' AND (customer_details->>'gstin' IS NOT NULL OR tax_type = 'export')
    UNION ALL
    SELECT 'credit_note', c.id FROM credit_notes c JOIN invoices i ON i.tenant_id = c.tenant_id AND i.id = c.invoice_id
    WHERE c.tenant_id = ${tenantId} AND c.number IS NOT NULL AND i.tax_type <> ''
      AND (i.customer_details->>'gstin' IS NOT NULL OR i.tax_type = 'export')`.execute(db);
  for (const doc of registrable.rows) {
    const document = await irpDocumentOf({ tx: db, tenantId, now: t.clock.now() }, doc.type, doc.id);
    expect(validateIrpDocument(document), `IRP document of ${doc.type} ${doc.id}`).toEqual([]);
  }

  const registered = await sql<{ id: string; time_zone: string }>`
    SELECT id, time_zone FROM legal_entities WHERE tenant_id = ${tenantId} AND gstin IS NOT NULL`.execute(db);
  for (const entity of registered.rows) {
    const today = localDate(t.clock.now(), entity.time_zone);
    const period = `${String(today.month).padStart(2, '0')}${today.year}`;
    const gstr1 = await getGstr1({ tx: db, tenantId, now: t.clock.now() }, entity.id, period);
    expect(validateGstr1(gstr1), `GSTR-1 ${period} of entity ${entity.id}`).toEqual([]);
  }

  for (const [table, kind] of [
    ['invoices', 'invoice'],
    ['credit_notes', 'credit note'],
  ] as const) {
    const numbers = await sql<{ entity_id: string; number: string }>`
      SELECT entity_id, number FROM ${sql.table(table)} WHERE tenant_id = ${tenantId} AND number IS NOT NULL`.execute(db);
    const byEntity = new Map<string, number[]>();
    // Numbered per entity and series (its prefix): top-ups have their own (decision 0840).
    for (const n of numbers.rows) {
      const series = `${n.entity_id} ${/^\D*/.exec(n.number)![0]}`;
      byEntity.set(series, [...(byEntity.get(series) ?? []), Number(n.number.replace(/^\D+/, ''))]);
    }
    for (const [entity, seq] of byEntity) {
      expect(
        seq.sort((a, b) => a - b),
        `${kind} numbers of entity ${entity} are 1..N`,
      ).toEqual(seq.map((_, i) => i + 1));
    }
  }
}

// ── One truth across the books (issue #34, DESIGN §18), each a named invariant ─────────────────

/** The entity's months from its first journal entry to now (`YYYY-MM`, in its zone). */
async function monthsOfEntity(tenantId: string, entity: { id: string; time_zone: string }): Promise<string[]> {
  const first = await sql<{ at: Date | null }>`
    SELECT min(posted_at) AS at FROM journal_entries WHERE tenant_id = ${tenantId} AND entity_id = ${entity.id}`.execute(t.database.db);
  const at = first.rows[0]?.at;
  if (!at) return [];
  const months: string[] = [];
  const last = periodOf(t.clock.now(), entity.time_zone);
  for (let p = periodOf(new Date(at), entity.time_zone); p <= last; p = nextPeriod(p)) months.push(p);
  return months;
}

/**
 * Invariant "GSTR-3B tax = output-tax accounts": for every GST-registered entity and month, each
 * head of GSTR-3B table 3.1 (rows (a) and (b), with what the month carried forward and took in —
 * 3.1 is never negative) equals the net movement of its output-tax account in the INR books that
 * month: IGST 2120, CGST 2100, SGST/UTGST 2110.
 */
async function checkGstr3bEqualsOutputTax(tenantId: string): Promise<void> {
  const db = t.database.db;
  const entities = await sql<{ id: string; time_zone: string }>`
    SELECT id, time_zone FROM legal_entities WHERE tenant_id = ${tenantId} AND gstin IS NOT NULL`.execute(db);
  const paise = (x: number | undefined) => Math.round((x ?? 0) * 100);
  for (const entity of entities.rows) {
    for (const month of await monthsOfEntity(tenantId, entity)) {
      const { from, to } = periodBounds(month, entity.time_zone);
      const ledger = await sql<{ account_code: number; net: string }>`
        SELECT l.account_code, (coalesce(sum(l.functional_credit), 0) - coalesce(sum(l.functional_debit), 0))::text AS net
        FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
        WHERE l.tenant_id = ${tenantId} AND e.entity_id = ${entity.id} AND l.account_code IN (2100, 2110, 2120)
          AND e.posted_at >= ${from} AND e.posted_at < ${to}
        GROUP BY l.account_code`.execute(db);
      const net = (code: number) => Number(ledger.rows.find((r) => r.account_code === code)?.net ?? 0);
      const ret = await getGstr3b({ tx: db, tenantId, now: t.clock.now() }, entity.id, `${month.slice(5)}${month.slice(0, 4)}`);
      type Heads = { iamt?: number; camt?: number; samt?: number };
      const rows = ret.sup_details as Record<string, Heads>;
      const carried = (ret as { carried_in?: Record<string, Heads>; carry_forward?: Record<string, Heads> }).carried_in ?? {};
      const forward = (ret as { carry_forward?: Record<string, Heads> }).carry_forward ?? {};
      const head = (k: keyof Heads) =>
        // carry_forward and carried_in are magnitudes of a net reduction: the month's own tax is
        // what 3.1 shows, less what it carried forward, plus what it took in from before.
        ['osup_det', 'osup_zero'].reduce((sum, row) => sum + paise(rows[row]?.[k]) - paise(forward[row]?.[k]) + paise(carried[row]?.[k]), 0);
      expect(
        { igst: head('iamt'), cgst: head('camt'), sgst: head('samt') },
        `GSTR-3B ${month} of entity ${entity.id} = net movement of the INR output-tax accounts`,
      ).toEqual({ igst: net(2120), cgst: net(2100), sgst: net(2110) });
    }
  }
}

/**
 * Invariant "revenue report = revenue accounts": per currency, `GET /v1/finance/revenue` reports as
 * recognized what revenue and its reversals (4000, 4900) hold, month by month, and as deferred
 * what 2400 holds.
 */
async function checkRevenueReportEqualsAccounts(w: World): Promise<void> {
  const db = t.database.db;
  const currencies = await sql<{ currency: string; recognized: string; deferred: string }>`
    SELECT e.currency,
      coalesce(sum(l.credit - l.debit) FILTER (WHERE l.account_code IN (4000, 4900)), 0)::text AS recognized,
      coalesce(sum(l.credit - l.debit) FILTER (WHERE l.account_code = 2400), 0)::text AS deferred
    FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${w.tenant.tenantId} GROUP BY e.currency`.execute(db);
  for (const c of currencies.rows) {
    const report = (await w.tenant.api('GET', `/v1/finance/revenue?currency=${c.currency}`)).body.data;
    const months = (report.months as { recognized: number }[]).reduce((sum, m) => sum + m.recognized, 0);
    expect(
      { recognized: report.recognized_total, months, deferred: report.deferred_total },
      `revenue report in ${c.currency} = the revenue accounts (4000 + 4900) and deferred revenue (2400)`,
    ).toEqual({ recognized: Number(c.recognized), months: Number(c.recognized), deferred: Number(c.deferred) });
  }
}

/** The Tally ledger each account of the chart goes to (docs/ledger.md "Tally mapping"); null: the party's own ledger. */
function tallyLedgerOf(code: number): string | null {
  const fixed: Record<number, string> = {
    1000: TALLY_LEDGERS.bank.name,
    1050: TALLY_LEDGERS.clearing.name,
    1200: TALLY_LEDGERS.tds.name,
    2100: TALLY_LEDGERS.cgst.name,
    2120: TALLY_LEDGERS.igst.name,
    2320: TALLY_LEDGERS.refunds.name,
    2400: TALLY_LEDGERS.deferred.name,
    4000: TALLY_LEDGERS.sales.name,
    4900: TALLY_LEDGERS.sales.name,
    4100: TALLY_LEDGERS.expired.name,
    4300: TALLY_LEDGERS.exchange.name,
    4310: TALLY_LEDGERS.unrealized.name,
    4390: TALLY_LEDGERS.rounding.name,
  };
  if (code === 2110) return 'SGST/UTGST';
  return [1100, 2300, 2310].includes(code) ? null : (fixed[code] ?? ACCOUNT_NAMES[code as AccountCode] ?? `Account ${code}`);
}

/**
 * Invariant "Tally export = trial balance": each entity's Tally XML over its whole history,
 * summed per ledger (Tally signs a debit negative), equals its functional (INR) trial balance
 * mapped to those ledgers; every party ledger together holds receivables, note credit and advances.
 */
async function checkTallyEqualsTrialBalance(w: World): Promise<void> {
  const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => ['TALLYMESSAGE', 'ALLLEDGERENTRIES.LIST'].includes(name) });
  const fixedNames = new Set<string>([...Object.values(TALLY_LEDGERS).map((l) => l.name), ...Object.values(ACCOUNT_NAMES)]);
  for (const entity of w.entities) {
    const info = (await w.tenant.api('GET', `/v1/entities/${entity}`)).body.data as { time_zone: string };
    const months = await monthsOfEntity(w.tenant.tenantId, { id: entity, ...info });
    if (months.length === 0) continue;
    // Through the end of next month: revaluation reversals are dated on the first of a month.
    const end = new Date(periodBounds(nextPeriod(months.at(-1)!), info.time_zone).to.getTime() - 1);
    const to = localDate(end, info.time_zone);
    const toText = `${to.year}-${String(to.month).padStart(2, '0')}-${String(to.day).padStart(2, '0')}`;
    const res = await w.tenant.api('GET', `/v1/accounting/export/tally?entity_id=${entity}&from=${months[0]}-01&to=${toText}`);
    expect(res.status, res.text).toBe(200);
    const messages = (parser.parse(res.text).ENVELOPE?.BODY?.IMPORTDATA?.REQUESTDATA?.TALLYMESSAGE ?? []) as { VOUCHER?: Record<string, unknown> }[];
    const sums = new Map<string, number>();
    for (const v of messages.filter((m) => m.VOUCHER).map((m) => m.VOUCHER!)) {
      for (const e of (v['ALLLEDGERENTRIES.LIST'] ?? []) as { LEDGERNAME: string; AMOUNT: string }[]) {
        const name = e.LEDGERNAME === TALLY_LEDGERS.sgst.name || e.LEDGERNAME === TALLY_LEDGERS.utgst.name ? 'SGST/UTGST' : e.LEDGERNAME;
        const key = fixedNames.has(e.LEDGERNAME) || name === 'SGST/UTGST' || name.startsWith('Account ') ? name : 'parties';
        sums.set(key, (sums.get(key) ?? 0) - Math.round(Number(e.AMOUNT) * 100));
      }
    }
    // As of the export's last day: entries dated in a later open month (its month closed) are in both.
    const tb = (await w.tenant.api('GET', `/v1/ledger/trial-balance?entity_id=${entity}&basis=functional&as_of=${toText}`)).body.data as {
      accounts: { code: number; balance: number }[];
    };
    const expected = new Map<string, number>();
    for (const a of tb.accounts) {
      const key = tallyLedgerOf(a.code) ?? 'parties';
      expected.set(key, (expected.get(key) ?? 0) + a.balance);
    }
    const nonZero = (m: Map<string, number>) => Object.fromEntries([...m].filter(([, v]) => v !== 0).sort(([a], [b]) => a.localeCompare(b)));
    expect(nonZero(sums), `Tally export of entity ${entity}, summed per ledger = its INR trial balance`).toEqual(nonZero(expected));
  }
}

/** Invariant "a filed return regenerated is byte-identical": every return marked filed reads (JSON and CSV) as it did when filed. */
async function checkFiledReturns(w: World): Promise<void> {
  for (const [key, filed] of w.filed) {
    const [kind, entity, period] = key.split('|') as ['gstr1' | 'gstr3b', string, string];
    const now = await returnText(w, kind, entity, period);
    expect(now.json, `${kind} ${period} of entity ${entity}, filed, regenerated (JSON)`).toBe(filed.json);
    expect(now.csv, `${kind} ${period} of entity ${entity}, filed, regenerated (CSV)`).toBe(filed.csv);
  }
}

type Heads = { txval: number; iamt: number; camt: number; samt: number };
const noHeads = (): Heads => ({ txval: 0, iamt: 0, camt: 0, samt: 0 });
const inPaise = (x: unknown) => Math.round(Number(x ?? 0) * 100);
function addHeads(into: Heads, item: Record<string, unknown>, sign: number, value = 'txval'): void {
  into.txval += sign * inPaise(item[value]);
  into.iamt += sign * inPaise(item.iamt);
  into.camt += sign * inPaise(item.camt);
  into.samt += sign * inPaise(item.samt);
}

/**
 * GSTR-3B table 3.1 rows as GSTR-1 (the same month, as answered) adds up, in paise:
 * - (a) osup_det: B2B regular invoices + B2CL + B2CS (net of its notes) − CDNR regular − CDNUR
 *   B2CL, + tax on advances of the month (11A) − advances adjusted (11B);
 * - (b) osup_zero: exports + SEZ invoices − their notes (CDNR SEZ, CDNUR EXPWP/EXPWOP);
 * - (c) osup_nil_exmp: table 8 (nil-rated + exempt), no tax.
 * The amendment sections (b2ba, cdnra) restate a filed document's recipient with its values
 * unchanged (decision 0365): they add nothing to 3.1.
 */
function table31FromGstr1(r1: Record<string, unknown>): Record<'osup_det' | 'osup_zero' | 'osup_nil_exmp', Heads> {
  const det = noHeads();
  const zeroRated = noHeads();
  const nil = noHeads();
  type Group = Record<string, unknown> & { inv?: Record<string, unknown>[]; nt?: Record<string, unknown>[] };
  const items = (doc: Record<string, unknown>): Record<string, unknown>[] =>
    ((doc.itms as Record<string, unknown>[] | undefined) ?? []).map((i) => (i.itm_det as Record<string, unknown> | undefined) ?? i);
  for (const g of (r1.b2b as Group[]) ?? []) {
    for (const inv of g.inv ?? []) for (const i of items(inv)) addHeads(inv.inv_typ === 'R' ? det : zeroRated, i, 1);
  }
  for (const g of (r1.b2cl as Group[]) ?? []) for (const inv of g.inv ?? []) for (const i of items(inv)) addHeads(det, i, 1);
  for (const row of (r1.b2cs as Record<string, unknown>[]) ?? []) addHeads(det, row, 1);
  for (const g of (r1.exp as Group[]) ?? []) for (const inv of g.inv ?? []) for (const i of items(inv)) addHeads(zeroRated, i, 1);
  for (const g of (r1.cdnr as Group[]) ?? []) {
    for (const nt of g.nt ?? []) for (const i of items(nt)) addHeads(nt.inv_typ === 'R' ? det : zeroRated, i, -1);
  }
  for (const nt of (r1.cdnur as Record<string, unknown>[]) ?? []) for (const i of items(nt)) addHeads(nt.typ === 'B2CL' ? det : zeroRated, i, -1);
  for (const row of (r1.at as Group[] | undefined) ?? []) for (const i of (row.itms as Record<string, unknown>[]) ?? []) addHeads(det, i, 1, 'ad_amt');
  for (const row of (r1.txpd as Group[] | undefined) ?? []) for (const i of (row.itms as Record<string, unknown>[]) ?? []) addHeads(det, i, -1, 'ad_amt');
  for (const row of (r1.nil as { inv?: Record<string, unknown>[] } | undefined)?.inv ?? []) nil.txval += inPaise(row.nil_amt) + inPaise(row.expt_amt);
  return { osup_det: det, osup_zero: zeroRated, osup_nil_exmp: nil };
}

/**
 * Invariant "GSTR-1 agrees with GSTR-3B": for every registered entity and month, per 3.1 row and
 * head, what GSTR-1 adds up to (table31FromGstr1) less what earlier months' reductions took off
 * (`carried_in`) is exactly what 3.1 shows less what it carries on (`carry_forward`): 3.1 is never
 * negative, a shortfall is carried to the next month (decision 0362), so `reported − carry_forward
 * = net − carried_in`, reported ≥ 0 and reported × carry_forward = 0 per head; and a month's
 * `carried_in` is the month before's `carry_forward`. Months whose GSTR-1 is filed but whose
 * GSTR-3B is not are compared with the GSTR-1 as generated now (the 3B declares GSTR-1A too).
 * Per rate, GSTR-1's sections add up to its HSN summary (table 12) at each rate.
 */
async function checkGstr1AgreesWithGstr3b(w: World): Promise<void> {
  const db = t.database.db;
  const ctx = { tx: db, tenantId: w.tenant.tenantId, now: t.clock.now() };
  const entities = await sql<{ id: string; time_zone: string }>`
    SELECT id, time_zone FROM legal_entities WHERE tenant_id = ${w.tenant.tenantId} AND gstin IS NOT NULL`.execute(db);
  for (const entity of entities.rows) {
    let previousForward: Record<string, Partial<Heads>> = {};
    for (const month of await monthsOfEntity(w.tenant.tenantId, entity)) {
      const period = `${month.slice(5)}${month.slice(0, 4)}`;
      const r3b = (await getGstr3b(ctx, entity.id, period)) as unknown as {
        sup_details: Record<string, Heads>;
        carried_in: Record<string, Partial<Heads>>;
        carry_forward: Record<string, Partial<Heads>>;
      };
      const r1 = (w.filed.has(`gstr1|${entity.id}|${period}`) && !w.filed.has(`gstr3b|${entity.id}|${period}`)
        ? await buildCurrentGstr1(ctx, entity.id, period)
        : await getGstr1(ctx, entity.id, period)) as unknown as Record<string, unknown>;
      const sums = table31FromGstr1(r1);
      const label = `GSTR-1 and GSTR-3B ${period} of entity ${entity.id}`;
      for (const row of ['osup_det', 'osup_zero', 'osup_nil_exmp'] as const) {
        for (const head of ['txval', 'iamt', 'camt', 'samt'] as const) {
          const reported = inPaise(r3b.sup_details[row]![head]);
          const forward = inPaise(r3b.carry_forward[row]?.[head]);
          const carried = inPaise(r3b.carried_in[row]?.[head]);
          expect(reported - forward, `${label}: 3.1 ${row} ${head} − carried forward = GSTR-1 − carried in`).toBe(sums[row][head] - carried);
          expect(reported >= 0 && forward >= 0 && (reported === 0 || forward === 0), `${label}: ${row} ${head} shown or carried, never both`).toBe(true);
          expect(carried, `${label}: ${row} ${head} carried in = the month before's carry forward`).toBe(inPaise(previousForward[row]?.[head]));
        }
      }
      previousForward = r3b.carry_forward;
      expect(sectionsPerRate(r1), `${label}: GSTR-1 sections per rate = its HSN summary per rate`).toEqual(hsnPerRate(r1));
    }
  }
}

/** GSTR-1 of a month as its documents now read (a fresh build with the filed figures set aside). */
async function buildCurrentGstr1(ctx: { tx: typeof t.database.db; tenantId: string; now: Date }, entityId: string, period: string): Promise<unknown> {
  const row = await ctx.tx
    .selectFrom('entity_periods')
    .select(['id', 'gstr1_return'])
    .where('tenant_id', '=', ctx.tenantId)
    .where('entity_id', '=', entityId)
    .where('period', '=', `${period.slice(2)}-${period.slice(0, 2)}`)
    .executeTakeFirstOrThrow();
  // Read inside a transaction that is rolled back: the figures as the books now have them.
  let fresh: unknown;
  await ctx.tx
    .transaction()
    .execute(async (tx) => {
      await tx.updateTable('entity_periods').set({ gstr1_return: null }).where('id', '=', row.id).execute();
      fresh = await getGstr1({ ...ctx, tx }, entityId, period);
      throw new Error('rollback');
    })
    .catch((e: Error) => {
      if (e.message !== 'rollback') throw e;
    });
  return fresh;
}

/** Per rate (percent): taxable value and tax of GSTR-1's sections (invoices less notes; table 8 at 0 %). */
function sectionsPerRate(r1: Record<string, unknown>): Record<string, Heads> {
  const out: Record<string, Heads> = {};
  const at = (rt: unknown) => (out[String(Number(rt ?? 0))] ??= noHeads());
  type Group = Record<string, unknown> & { inv?: Record<string, unknown>[]; nt?: Record<string, unknown>[] };
  const items = (doc: Record<string, unknown>): Record<string, unknown>[] =>
    ((doc.itms as Record<string, unknown>[] | undefined) ?? []).map((i) => (i.itm_det as Record<string, unknown> | undefined) ?? i);
  for (const section of ['b2b', 'b2cl', 'exp'] as const) {
    for (const g of (r1[section] as Group[]) ?? []) for (const inv of g.inv ?? []) for (const i of items(inv)) addHeads(at(i.rt), i, 1);
  }
  for (const row of (r1.b2cs as Record<string, unknown>[]) ?? []) addHeads(at(row.rt), row, 1);
  for (const g of (r1.cdnr as Group[]) ?? []) for (const nt of g.nt ?? []) for (const i of items(nt)) addHeads(at(i.rt), i, -1);
  for (const nt of (r1.cdnur as Record<string, unknown>[]) ?? []) for (const i of items(nt)) addHeads(at(i.rt), i, -1);
  for (const row of (r1.nil as { inv?: Record<string, unknown>[] } | undefined)?.inv ?? []) at(0).txval += inPaise(row.nil_amt) + inPaise(row.expt_amt);
  return Object.fromEntries(Object.entries(out).filter(([, h]) => h.txval || h.iamt || h.camt || h.samt));
}

/** Per rate: table 12 (HSN summary, B2B and B2C tabs together). */
function hsnPerRate(r1: Record<string, unknown>): Record<string, Heads> {
  const out: Record<string, Heads> = {};
  const hsn = (r1.hsn as Record<string, Record<string, unknown>[]> | undefined) ?? {};
  for (const row of [...(hsn.hsn_b2b ?? []), ...(hsn.hsn_b2c ?? [])]) addHeads((out[String(Number(row.rt ?? 0))] ??= noHeads()), row, 1);
  return Object.fromEntries(Object.entries(out).filter(([, h]) => h.txval || h.iamt || h.camt || h.samt));
}

/** The one-truth invariants of issue #34, after every step. */
async function checkOneTruth(w: World): Promise<void> {
  await checkFiledReturns(w);
  await checkGstr1AgreesWithGstr3b(w);
  await checkGstr3bEqualsOutputTax(w.tenant.tenantId);
  await checkRevenueReportEqualsAccounts(w);
  await checkTallyEqualsTrialBalance(w);
}

/**
 * After every step: the invariants above, then a full reconciliation run (billing records ↔
 * journal ↔ secondary ledger, through the API and the job queue) with zero discrepancies, and a
 * balanced trial balance for every entity × currency.
 */
async function checkBooks(w: World, after: string): Promise<void> {
  await checkInvariants(w.tenant.tenantId);
  await checkSettledRefunds(w);
  for (const entity of w.entities) {
    const tb = (await w.tenant.api('GET', `/v1/ledger/trial-balance?entity_id=${entity}&basis=functional`)).body.data;
    expect({ balanced: tb.balanced, unvalued: tb.unvalued_entries }, `INR trial balance of ${entity} after ${after}`).toEqual({ balanced: true, unvalued: 0 });
  }
  const run = await reconcileTenant(t, w.tenant);
  expect(run.discrepancies, `reconciliation after ${after}`).toEqual([]);
  expect(run.total_discrepancies, `reconciliation after ${after}`).toBe(0);
  await expectBalancedTrialBalances(w.tenant);
  await checkOneTruth(w);
}

describe('the books tie out after every operation', () => {
  it('reconciles a dollar invoice paid with TDS whose rounding leaves a functional-only exchange line (no transfer by design)', async () => {
    const world = await newWorld();
    const o: Op = {
      kind: 'coupon_credit_tds',
      customer: 1432681366,
      entity: 936111170,
      amounts: [2316260],
      hsn: ['998314', '998314', '998314'],
      percent: 1,
      off: 1,
      credit: 0,
      tds: 8,
    };
    const res = await step(world, o);
    expect(res?.status, res?.text).toBe(201);
    await checkBooks(world, o.kind);
  });

  it('coupon + credit note + TDS on one invoice, and seats on a discounted subscription, keep the invariants', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      {
        kind: 'coupon_credit_tds',
        customer: 0,
        entity: 0,
        amounts: [100_000, 33_333],
        hsn: ['998314', '0902', '6904'],
        percent: 1250,
        off: 1,
        credit: 30,
        tds: 10,
      },
      {
        kind: 'coupon_credit_tds',
        customer: 1,
        entity: 1,
        amounts: [5_000],
        hsn: ['998314', '0902', '6904'],
        percent: undefined,
        off: 7_000,
        credit: 0,
        tds: 0,
      },
      {
        kind: 'coupon_credit_tds',
        customer: 2,
        entity: 0,
        amounts: [250_000, 1],
        hsn: ['998314', '998314', '998314'],
        percent: undefined,
        off: 99_999,
        credit: 100,
        tds: 0,
      },
      { kind: 'coupon_credit_tds', customer: 0, entity: 1, amounts: [2_000_000], hsn: ['6904', '0902', '6904'], percent: 10_000, off: 1, credit: 50, tds: 5 },
      { kind: 'seats', quantity: 2, prorate: true, coupon: true },
      { kind: 'add_on', quantity: 3, prorate: true },
      { kind: 'time_passes', days: 10 },
      { kind: 'seats', quantity: 5, prorate: true, coupon: false },
      { kind: 'add_on', quantity: 1, prorate: true },
      { kind: 'seats', quantity: 1, prorate: true, coupon: false },
      { kind: 'pay', invoice: 4, share: 100, tds: 10 },
      { kind: 'seats', quantity: 3, prorate: false, coupon: false },
      { kind: 'time_passes', days: 25 },
    ];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      await checkInvariants(world.tenant.tenantId);
    }
    const invoices = await Promise.all(world.invoices.map(async (id) => (await world.tenant.api('GET', `/v1/invoices/${id}`)).body.data));
    // The scenario did what it says: discounted invoices, one discounted to zero, TDS recorded.
    expect(invoices.filter((i) => i.discount_amount > 0).length).toBeGreaterThanOrEqual(5);
    expect(invoices.some((i) => i.discount_amount > 0 && i.total === 0)).toBe(true);
    expect(invoices.some((i) => i.discount_amount > 0 && i.amount_tds > 0)).toBe(true);
    expect(invoices.filter((i) => i.billing_reason === 'subscription_update').length).toBeGreaterThanOrEqual(2);
  }, 600_000);

  it('a subscription with a minimum commitment, trued up at renewals beside seats and an add-on, keeps the invariants', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      { kind: 'commitment', amount: 300_000, perPrice: false },
      { kind: 'time_passes', days: 31 },
      { kind: 'add_on', quantity: 2, prorate: true },
      { kind: 'commitment', amount: 400_000, perPrice: true },
      { kind: 'seats', quantity: 2, prorate: true, coupon: false },
      { kind: 'time_passes', days: 31 },
      { kind: 'commitment', amount: 0, perPrice: false },
      { kind: 'time_passes', days: 31 },
    ];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(300);
      await checkInvariants(world.tenant.tenantId);
    }
    const invoices = await Promise.all(world.invoices.map(async (id) => (await world.tenant.api('GET', `/v1/invoices/${id}`)).body.data));
    const trueUps = invoices.flatMap((i) => (i.lines as { description: string }[]).filter((l) => l.description.startsWith('Minimum commitment true-up')));
    // The first renewal trues up the ₹3 000 commitment (₹999 billed); the second the plan price's
    // ₹4 000 (at most 99 900 + 96 677 + 193 354 = 389 931 billed on it before the credits of two
    // prorations); none after its removal.
    expect(trueUps).toHaveLength(2);
  }, 600_000);

  it('refunds after a line note (issue #28 item 1), by lines and by a note balance, keep the invariants', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      // Services ₹1,000 at 18 % and tea ₹200 at 5 %, intra-state; part paid offline with TDS, the rest by card.
      { kind: 'invoice', customer: 0, entity: 0, amounts: [100_000, 20_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'pay', invoice: 0, share: 36, tds: 20 },
      { kind: 'charge', invoice: 0, fresh: false, amount: 1, token: 'tok_visa', then: undefined },
      { kind: 'credit_line', invoice: 0, line: 1, share: 100, expires: false },
      // The card payment refunded by the tea note's amount: pays the note out, issues nothing.
      { kind: 'refund', payment: 1, share: 23, whole: false },
      { kind: 'refund_lines', payment: 1, lines: [0], share: 10 },
      // The tea line is credited in full already: refused (409).
      { kind: 'refund_lines', payment: 0, lines: [1], share: 100 },
      { kind: 'refund_note', note: 0, payment: undefined, share: 100 },
      { kind: 'credit', customer: 0, invoice: 0, share: 5, expires: false },
      { kind: 'refund_note', note: 2, payment: 0, share: 50 },
      { kind: 'refund', payment: 1, share: 100, whole: true },
      { kind: 'gateway_settles', hours: 72 },
    ];
    const statuses: number[] = [];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      statuses.push(res?.status ?? 0);
      await checkBooks(world, o.kind);
    }
    expect(statuses.slice(0, 8)).toEqual([201, 201, 200, 201, 201, 201, 409, 201]);
    const refunds = (await world.tenant.api('GET', '/v1/refunds?limit=100')).body.data as { credit_note_issued: boolean }[];
    expect(
      refunds.some((r) => !r.credit_note_issued),
      'some refund paid a note out',
    ).toBe(true);
    expect(
      refunds.some((r) => r.credit_note_issued),
      'some refund issued its own note',
    ).toBe(true);
  }, 600_000); // the one-truth checks (Tally, GSTR-3B per month) after each of its twelve steps

  it('paid gateway refunds the gateway fails later (an own note, a payout of a note) keep the invariants (decision 0860)', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      // ₹1,180 charged to a card; a ₹590 refund that issues its own note, paid, then failed by the gateway.
      { kind: 'invoice', customer: 0, entity: 0, amounts: [100_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'charge', invoice: 0, fresh: false, amount: 1, token: 'tok_visa', then: undefined },
      { kind: 'refund', payment: 0, share: 50, whole: false },
      { kind: 'refund_fails_later', refund: 0 },
      // The note's credit is spendable again: paid out through the card, paid, failed later too.
      { kind: 'refund_note', note: 0, payment: 0, share: 100 },
      { kind: 'refund_fails_later', refund: 1 },
      { kind: 'refund_fails_later', refund: 1 },
      { kind: 'gateway_settles', hours: 72 },
    ];
    const statuses: number[] = [];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      statuses.push(res?.status ?? 0);
      await checkBooks(world, o.kind);
    }
    // The second late failure of the same refund is not sent: the refund is failed already.
    expect(statuses.slice(0, 7)).toEqual([201, 200, 201, 200, 201, 200, 0]);
  }, 600_000);

  it('offline refunds marked paid (also back-dated, in dollars after the rate moved) or failed keep the invariants (decision 0570)', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      // ₹1,180 (1,000 + 18 %) paid offline in full; a refund of ₹590 owed in 2320, paid by hand back-dated halfway.
      { kind: 'invoice', customer: 0, entity: 0, amounts: [100_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'pay', invoice: 0, share: 100, tds: 0 },
      { kind: 'refund', payment: 0, share: 50, whole: false },
      { kind: 'time_passes', days: 3 },
      { kind: 'settle_refund', refund: 0, fresh: false, customer: 0, amount: 1, share: 1, paid: true, when: 50, again: 'mark_failed' },
      // Another ₹295 refunded, then not paid (the credit goes back to its note), and a second mark_paid refused.
      { kind: 'refund', payment: 0, share: 50, whole: false },
      { kind: 'settle_refund', refund: 0, fresh: false, customer: 0, amount: 1, share: 1, paid: false, when: undefined, again: 'mark_paid' },
      // A dollar invoice paid offline, refunded, the dollar moves 5 %, paid out by hand at today's rate.
      { kind: 'invoice', customer: 2, entity: 0, amounts: [10_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'pay', invoice: 1, share: 100, tds: 0 },
      { kind: 'refund', payment: 1, share: 100, whole: true },
      { kind: 'fx_rate', currency: 'USD', permille: 50 },
      { kind: 'settle_refund', refund: 0, fresh: false, customer: 0, amount: 1, share: 1, paid: true, when: undefined, again: 'mark_paid' },
      // Nothing pending left: ₹295 more of the first payment (half of the ₹590 left) is refunded — it
      // pays out the ₹295 credit the failed refund gave back to its note — and not paid either.
      { kind: 'settle_refund', refund: 0, fresh: false, customer: 0, amount: 1, share: 50, paid: false, when: undefined, again: 'mark_failed' },
      // A new ₹250 invoice to the Maharashtra customer (IGST 18 %: ₹295) paid offline; ₹73 of it (25 %) refunded and paid by hand.
      { kind: 'settle_refund', refund: 0, fresh: true, customer: 1, amount: 25_000, share: 25, paid: true, when: 100, again: 'mark_failed' },
    ];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      await checkBooks(world, o.kind);
    }
    expect([...world.settled.values()]).toEqual(['succeeded', 'failed', 'succeeded', 'failed', 'succeeded']);
    const last = (await world.tenant.api('GET', `/v1/refunds/${world.refunds.at(-1)}`)).body.data;
    // 25 % of 29 500 = 7 375.
    expect({ amount: last.amount, status: last.status }).toEqual({ amount: 7_375, status: 'succeeded' });
  }, 600_000);

  it("advances' refunds paid by hand (also in dollars after the rate moved) keep the invariants (decision 0740)", async () => {
    const world = await newWorld();
    const ops: Op[] = [
      // ₹11,800 received in advance (10,000 + CGST 900 + SGST 900); ₹5,900 refunded with a refund
      // voucher (CGST 450 + SGST 450 reversed): an offline refund owed in 2320.
      { kind: 'advance', customer: 0, entity: 0, amount: 1_180_000, goods: false },
      { kind: 'advance_refund', advance: 0, share: 50, whole: false },
      // Not paid? The voucher stands: 409 refund_voucher_issued. Then paid by hand: Dr 2320 / Cr 1000.
      { kind: 'settle_refund', refund: 0, fresh: false, customer: 0, amount: 1, share: 1, paid: false, when: undefined, again: 'mark_paid' },
      { kind: 'settle_refund', refund: 0, fresh: false, customer: 0, amount: 1, share: 1, paid: true, when: undefined, again: 'mark_failed' },
      // A dollar advance refunded whole, the dollar moves 5 %, paid out at today's rate: 2320 leaves
      // at the voucher's rupee value, the difference is realized exchange.
      { kind: 'advance', customer: 2, entity: 0, amount: 11_800, goods: false },
      { kind: 'advance_refund', advance: 1, share: 100, whole: true },
      { kind: 'fx_rate', currency: 'USD', permille: 50 },
      { kind: 'settle_refund', refund: 0, fresh: false, customer: 0, amount: 1, share: 1, paid: true, when: 100, again: 'mark_paid' },
    ];
    const statuses: number[] = [];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      statuses.push(res?.status ?? 0);
      await checkBooks(world, o.kind);
    }
    expect(statuses).toEqual([201, 201, 409, 200, 201, 201, statuses[6], 200]);
    expect([...world.settled.values()]).toEqual(['succeeded', 'succeeded']);
    const refunds = (await world.tenant.api('GET', '/v1/refunds?limit=100')).body.data as { advance_id: string | null; status: string; currency: string }[];
    expect(refunds.filter((r) => r.advance_id).map((r) => `${r.currency} ${r.status}`)).toEqual(['USD succeeded', 'INR succeeded']);
  }, 600_000);

  it('a parent paying for two children (first invoices, a consolidated renewal, payment, a note) keeps the invariants', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      // North and South, 2 × ₹500 a month each, billed to customer 1 (Maharashtra) from Karnataka:
      // each first invoice is the parent's, 100 000 + IGST 18 % 18 000 = 118 000.
      { kind: 'group', quantity: 2 },
      // 31 days on, both renew onto one invoice to the parent: 200 000 + IGST 36 000 = 236 000.
      { kind: 'time_passes', days: 31 },
      { kind: 'pay', invoice: 2, share: 100, tds: 0 },
      { kind: 'credit', customer: 1, invoice: 2, share: 10, expires: false },
      { kind: 'pay', invoice: 0, share: 50, tds: 0 },
    ];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      await checkBooks(world, o.kind);
    }
    const invoices = await Promise.all(world.invoices.map(async (id) => (await world.tenant.api('GET', `/v1/invoices/${id}`)).body.data));
    expect(invoices.map((i) => [i.customer_id, i.billing_reason, i.total])).toEqual([
      [world.customers[1], 'subscription_create', 118_000],
      [world.customers[1], 'subscription_create', 118_000],
      [world.customers[1], 'subscription_cycle', 236_000],
    ]);
    expect(invoices[2]).toMatchObject({ status: 'paid', amount_paid: 236_000, igst_amount: 36_000 });
    expect(invoices[2].lines.map((l: { customer_id: string }) => l.customer_id).sort()).toEqual([...world.group!.children].sort());
  }, 600_000);

  it('advances (received, applied, refunded; unregistered entity; KWD) and a mismatched webhook keep the invariants', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      // ₹11,800 advance to the primary entity (intra-state, GST 1,800), then an invoice that takes part of it.
      { kind: 'advance', customer: 0, entity: 0, amount: 1_180_000, goods: false },
      { kind: 'invoice', customer: 0, entity: 0, amounts: [500_000], hsn: ['998314', '0902', '6904'], finalize: true },
      // A draft finalized later also takes from it; apply-balance on a paid one is refused.
      { kind: 'invoice', customer: 0, entity: 0, amounts: [1_000_000], hsn: ['998314', '0902', '6904'], finalize: false },
      { kind: 'advance', customer: 0, entity: 0, amount: 3_333, goods: false },
      { kind: 'finalize', invoice: 1 },
      { kind: 'apply_balance', invoice: 0 },
      // The unregistered entity (no GST), a goods advance (no GST), a KWD advance from Kuwait (export under LUT).
      { kind: 'advance', customer: 1, entity: 2, amount: 50_000, goods: false },
      { kind: 'advance', customer: 1, entity: 1, amount: 21_000, goods: true },
      { kind: 'advance', customer: 3, entity: 0, amount: 12_345, goods: false },
      { kind: 'advance_refund', advance: 2, share: 40, whole: false },
      { kind: 'advance_refund', advance: 2, share: 100, whole: true },
      { kind: 'advance_refund', advance: 1, share: 100, whole: true },
      { kind: 'invoice', customer: 3, entity: 0, amounts: [10_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'mismatch', amount: 20_000, wrong: 'amount', then: true },
      { kind: 'mismatch', amount: 7_000, wrong: 'currency', then: false },
      { kind: 'refund', payment: 0, share: 50, whole: false },
    ];
    const statuses: number[] = [];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      statuses.push(res?.status ?? 0);
      await checkBooks(world, o.kind);
    }
    expect(world.advances.length, 'five advances were received').toBe(5);
    const advances = await Promise.all(world.advances.map(async (id) => (await world.tenant.api('GET', `/v1/advances/${id}`)).body.data));
    expect(advances.map((a) => a.tax_amount > 0)).toEqual([true, true, false, false, false]);
    expect(advances[0].movements.length, 'the first advance paid two invoices').toBeGreaterThanOrEqual(2);
    expect(statuses[5], 'apply-balance on a paid invoice').toBe(409);
  }, 600_000);

  it('filed returns read the same ever after, and a tied note expiring after its month was filed keeps the books and returns one (decision 0620)', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      // Seed -1876663559 (there on the first entity): a 3B filed, then a day passes — its CSV came
      // back from storage with 3.1's rows reordered.
      { kind: 'file', entity: 1, back: 0, returns: 'gstr3b' },
      { kind: 'gateway_settles', hours: 24 },
      // A registered buyer's ₹10,000 services (CGST 900 + SGST 900) + ₹2,000 tea (CGST 50 + SGST 50),
      // intra-state, paid; a note of half its total (₹6,950: CGST 475 + SGST 475) expiring in 30
      // days, in the next month. Before decision 0620 its expiry put CGST 475 + SGST 475 back in that
      // month's books, which no GSTR-3B declared (the invariant "GSTR-3B = output-tax accounts").
      { kind: 'invoice', customer: 0, entity: 0, amounts: [1_000_000, 200_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'pay', invoice: 0, share: 100, tds: 0 },
      { kind: 'credit', customer: 0, invoice: 0, share: 50, expires: true },
      { kind: 'file', entity: 0, back: 0, returns: 'both' },
      // Filed again: refused (409 return_already_filed).
      { kind: 'file', entity: 0, back: 0, returns: 'gstr1' },
      { kind: 'time_passes', days: 35 },
      { kind: 'invoice', customer: 1, entity: 0, amounts: [50_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'file', entity: 0, back: 0, returns: 'gstr1' },
      { kind: 'file', entity: 1, back: 2, returns: 'both' },
    ];
    const statuses: number[] = [];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      statuses.push(res?.status ?? 0);
      await checkBooks(world, o.kind);
    }
    expect(statuses.slice(2, 7)).toEqual([201, 201, 201, 200, 409]);
    const note = (await world.tenant.api('GET', `/v1/credit-notes/${world.notes[0]}`)).body.data;
    expect(note.status, 'the note expired with its balance').toBe('expired');
    expect(world.filed.size, 'four returns were filed').toBeGreaterThanOrEqual(4);
  }, 600_000);

  it('documents made while their month is closed (an advance, its refund, a payment with TDS) are declared where the books put them', async () => {
    const world = await newWorld();
    const ops: Op[] = [
      { kind: 'invoice', customer: 0, entity: 0, amounts: [1_000_000], hsn: ['998314', '0902', '6904'], finalize: true },
      { kind: 'file', entity: 0, back: 0, returns: 'gstr1' },
      // ₹11,800 received in advance (₹10,000 + CGST 900 + SGST 900) while the month is closed.
      { kind: 'advance', customer: 0, entity: 0, amount: 1_180_000, goods: false },
      { kind: 'advance_refund', advance: 0, share: 50, whole: false },
      { kind: 'pay', invoice: 0, share: 50, tds: 10 },
      { kind: 'time_passes', days: 35 },
      { kind: 'file', entity: 0, back: 1, returns: 'gstr3b' },
    ];
    for (const o of ops) {
      const res = await step(world, o);
      if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
      await checkBooks(world, o.kind);
    }
    // The receipt voucher and the refund voucher are dated at 00:00 IST on the 1st of the next
    // month (18:30 UTC the day before), as their entries are — not in the filed month.
    const filedPeriod = [...world.filed.keys()].find((k) => k.startsWith('gstr1|'))!.split('|')[2]!;
    const firstOfNext = periodBounds(nextPeriod(`${filedPeriod.slice(2)}-${filedPeriod.slice(0, 2)}`), 'Asia/Kolkata').from.toISOString();
    expect(firstOfNext.slice(11), '00:00 IST').toBe('18:30:00.000Z');
    const advance = (await world.tenant.api('GET', `/v1/advances/${world.advances[0]}`)).body.data;
    expect(advance.received_at, 'the receipt voucher is dated in the first open month').toBe(firstOfNext);
    const entries = (await world.tenant.api('GET', '/v1/ledger/journal-entries?kind=advance.refunded')).body.data as { posted_at: string }[];
    expect(
      entries.map((e) => e.posted_at),
      'the refund voucher too',
    ).toEqual([firstOfNext]);
  }, 600_000);

  it(
    `holds the ledger invariants over ${RUNS} random histories of ${STEPS} steps`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: STEPS }), async (ops) => {
          const world = await newWorld();
          for (const o of ops) {
            const res = await step(world, o);
            // Refusals are fine (paying a void invoice, over-applying credit …); a 5xx never is.
            if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
            await checkBooks(world, o.kind);
          }
        }),
        propertyRuns(),
      );
    },
    Math.max(60_000, RUNS * STEPS * 10_000),
  ); // a long hunt is long; it is never cut short by the default timeout
});
