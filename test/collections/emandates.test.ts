import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { outsideUpiPeak, testGatewayJournal } from '../../src/modules/collections/index.js';
import { enqueueJob } from '../../src/platform/jobs/jobs.js';

/**
 * E-mandates (issue #32 item 7, docs/decisions/0520). Sources:
 * - RBI, processing of e-mandates for recurring transactions: a subsequent debit without the
 *   customer's additional factor of authentication (AFA) up to ₹15 000 (circular of 16 June 2022),
 *   ₹1 lakh for mutual fund subscriptions, insurance premiums and credit card bills (circular of
 *   12 December 2023); pre-debit notice ≥ 24 h ahead naming merchant, amount, date, reference, with
 *   an opt-out of that debit; post-debit notice; all consolidated in the "Digital Payments –
 *   E-mandate Framework, 2026" (21 April 2026).
 * - NPCI, UPI API usage (from 31 July 2025): AutoPay executions outside the peak hours 10:00–13:00
 *   and 17:00–21:30 IST, one attempt plus at most three retries per debit.
 *
 * Worked example (an entity in Karnataka, a customer in Karnataka: CGST 9 % + SGST 9 %):
 *   ₹15 254.24 + CGST ₹1 372.88 + SGST ₹1 372.88 = ₹18 000.00 > ₹15 000 → not debited, pay link;
 *   ₹10 000.00 + CGST ₹900.00 + SGST ₹900.00 = ₹11 800.00 ≤ ₹15 000 → announced, debited 24 h later.
 */

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let sink: MailSink;
let journal: ReturnType<typeof testGatewayJournal>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in' } });
  journal = testGatewayJournal(t.kosh.deps.scope, 'memory:');
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

async function mandateCustomer(token: string, mandate?: Record<string, unknown>): Promise<{ customer: string; email: string; pm: Record<string, unknown> }> {
  const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
  const res = await acme.api('POST', `/v1/customers/${customer}/payment-methods`, { token, ...(mandate ? { mandate } : {}) });
  expect(res.status, res.text).toBe(201);
  const email = (await acme.http.GET('/v1/customers/{id}', { path: { id: customer } })).body.data.email as string;
  return { customer, email, pm: res.body.data };
}

const attemptsOf = async (invoiceId: string) => (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoiceId } })).body.data;
const invoiceOf = async (invoiceId: string) => (await acme.http.GET('/v1/invoices/{id}', { path: { id: invoiceId } })).body.data;
const mailTo = (email: string) => sink.messages.filter((m) => m.envelope.to.includes(email));
const chargesOf = async (invoiceId: string) => {
  const ids = new Set((await attemptsOf(invoiceId)).map((a: { id: string }) => `kosh_att_${a.id}`));
  return journal.allCharges().filter((c) => ids.has(c.key));
};
const autoInvoice = (customer: string, unit: number) => createInvoice(acme, customer, [unit], { collection_method: 'charge_automatically' });

describe('mandate terms', () => {
  it('stores a mandate’s maximum, validity and frequency and shows them on the payment method', async () => {
    const from = t.clock.now();
    const until = new Date(from.getTime() + 365 * DAY);
    const { customer, pm } = await mandateCustomer('tok_card_mandate', { max_amount: 50_000_00, frequency: 'monthly', valid_until: until.toISOString() });
    expect(pm.mandate).toEqual({
      reference: 'tok_card_mandate',
      max_amount: 50_000_00,
      valid_from: from.toISOString(),
      valid_until: until.toISOString(),
      frequency: 'monthly',
    });
    const listed = (await acme.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body.data;
    expect(listed[0]!.mandate!.max_amount).toBe(50_000_00);
    // A plain card is no mandate: no terms shown, none accepted.
    const card = await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_visa' } });
    expect(card.body.data.mandate).toBeNull();
    const refused = await acme.http.POST('/v1/customers/{id}/payment-methods', {
      path: { id: customer },
      body: {
        token: 'tok_visa',
        mandate: { max_amount: 1_000_00, frequency: 'monthly' },
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('not an e-mandate');
  });
});

describe('debits above the AFA-free limit or outside the mandate', () => {
  it('₹18 000 on a card mandate is not debited: the attempt says why and the customer gets a pay link', async () => {
    const { customer, email } = await mandateCustomer('tok_card_mandate', { max_amount: 50_000_00, frequency: 'monthly' });
    const inv = await autoInvoice(customer, 15_254_24);
    expect(inv.amount_due).toBe(18_000_00);
    await t.kosh.worker.drain();
    const [attempt] = await attemptsOf(inv.id);
    expect(attempt).toMatchObject({ status: 'canceled', failure_code: 'mandate_authentication_required', amount: 18_000_00, charge_after: null });
    expect(attempt!.failure_message).toBe(
      "INR 18,000.00 is above INR 15,000.00, the most a mandate debit may take without the customer's additional authentication (RBI e-mandate framework); not debited: the customer was sent a pay link",
    );
    const [mail] = mailTo(email);
    const merchant = (await acme.http.GET('/v1/entities/{id}', { path: { id: entityId } })).body.data.legal_name;
    expect(mail?.subject).toBe(`Please pay invoice ${inv.number} (INR 18,000.00) to ${merchant}`);
    expect(mail?.text).toContain('will not be debited from your mandate: INR 18,000.00 is above INR 15,000.00');
    const payUrl = /https:\/\/billing\.example\.in\/checkout\/[^\s]+/.exec(mail?.text ?? '')?.[0];
    expect(payUrl).toBeDefined();
    // The link opens the invoice's checkout page (24 hours, like every checkout link).
    const page = await t.call({ method: 'GET', url: payUrl!.replace('https://billing.example.in', '') });
    expect(page.status).toBe(200);
    expect(page.text).toContain(inv.number);
    // No pre-debit notice, no gateway call; the invoice stays open.
    expect(mailTo(email)).toHaveLength(1);
    t.clock.advance(DAY + HOUR);
    await t.kosh.worker.drain();
    expect(await chargesOf(inv.id)).toHaveLength(0);
    expect((await invoiceOf(inv.id)).status).toBe('open');
  });

  it('the pay link is mailed once: the job run again for the same attempt (a retry, a duplicate) sends nothing more', async () => {
    const { customer, email } = await mandateCustomer('tok_card_mandate', { max_amount: 50_000_00, frequency: 'monthly' });
    const inv = await autoInvoice(customer, 15_254_24); // ₹18 000 as above: above ₹15 000, a pay link
    await t.kosh.worker.drain();
    const [attempt] = await attemptsOf(inv.id);
    expect(attempt!.status).toBe('canceled');
    expect(mailTo(email)).toHaveLength(1);
    // The job again with the same attempt, twice over (as a retry after a crash past its commit would run it).
    for (let i = 0; i < 2; i++) {
      await enqueueJob(t.database.db, t.clock.now(), {
        kind: 'collections.mandate_pay_links',
        tenantId: acme.tenantId,
        payload: { attempt_ids: [attempt!.id] },
      });
      await t.kosh.worker.drain();
    }
    expect(mailTo(email)).toHaveLength(1);
    const logged = await t.database.db
      .selectFrom('notifications')
      .select(['status', 'recipient'])
      .where('tenant_id', '=', acme.tenantId)
      .where('notification', '=', 'mandate_pay_link')
      .where('dedupe_key', '=', attempt!.id)
      .execute();
    expect(logged).toEqual([{ status: 'queued', recipient: email }]);
  });

  it('the listed categories’ ₹1 lakh limit (entity setting) lets ₹18 000 be announced and debited', async () => {
    const patched = await acme.http.PATCH('/v1/entities/{id}', {
      path: { id: entityId },
      body: {
        emandate: { category: 'insurance_premium', grievance_contact: 'Grievance Officer, grievance@acme.example.in' },
      },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.emandate).toEqual({
      category: 'insurance_premium',
      afa_limit: null,
      afa_free_limit: 1_00_000_00,
      grievance_contact: 'Grievance Officer, grievance@acme.example.in',
    });
    try {
      const { customer } = await mandateCustomer('tok_card_mandate');
      const inv = await autoInvoice(customer, 15_254_24);
      await t.kosh.worker.drain();
      expect(await attemptsOf(inv.id)).toMatchObject([{ status: 'pending', amount: 18_000_00 }]);
      // An explicit limit overrides the category's: ₹17 999.99 refuses the ₹18 000.00 debit.
      await acme.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { emandate: { afa_limit: 17_999_99 } } });
      const second = await autoInvoice(customer, 15_254_24);
      await t.kosh.worker.drain();
      expect(await attemptsOf(second.id)).toMatchObject([{ status: 'canceled', failure_code: 'mandate_authentication_required' }]);
    } finally {
      await acme.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { emandate: { category: 'standard', afa_limit: null } } });
    }
  });

  it('a debit above the mandate’s maximum, or after its validity, is not attempted', async () => {
    const { customer } = await mandateCustomer('tok_card_mandate', { max_amount: 5_000_00, frequency: 'as_presented' });
    // ₹5 000.00 + 18 % = ₹5 900.00 > the mandate's ₹5 000.00.
    const inv = await autoInvoice(customer, 5_000_00);
    await t.kosh.worker.drain();
    const [attempt] = await attemptsOf(inv.id);
    expect(attempt).toMatchObject({ status: 'canceled', failure_code: 'mandate_max_amount_exceeded' });
    expect(attempt!.failure_message).toContain("INR 5,900.00 is above the mandate's maximum of INR 5,000.00");

    // Valid for 12 hours: a debit 24 hours after its notice falls outside.
    const until = new Date(t.clock.now().getTime() + 12 * HOUR).toISOString();
    const { customer: brief } = await mandateCustomer('tok_card_mandate', { max_amount: 50_000_00, frequency: 'monthly', valid_until: until });
    const late = await autoInvoice(brief, 1_000_00);
    await t.kosh.worker.drain();
    expect(await attemptsOf(late.id)).toMatchObject([{ status: 'canceled', failure_code: 'mandate_outside_validity' }]);
  });
});

describe('the pre-debit notice, the skip link and the post-debit notice', () => {
  it('₹11 800 is announced with merchant, amount, date, mandate reference and a skip link, debited after 24 hours, then confirmed with the grievance contact', async () => {
    await acme.http.PATCH('/v1/entities/{id}', {
      path: { id: entityId },
      body: { emandate: { grievance_contact: 'grievance@acme.example.in, 080 4000 0000' } },
    });
    const { customer, email } = await mandateCustomer('tok_card_mandate', { max_amount: 50_000_00, frequency: 'monthly' });
    const start = t.clock.now().getTime();
    const inv = await autoInvoice(customer, 10_000_00);
    expect(inv.amount_due).toBe(11_800_00);
    await t.kosh.worker.drain();
    const [attempt] = await attemptsOf(inv.id);
    // A card mandate: exactly 24 hours (no UPI peak-hour shift).
    expect(attempt).toMatchObject({ status: 'pending', charge_after: new Date(start + DAY).toISOString() });
    const [notice] = mailTo(email);
    const ist = new Date(start + DAY + 5.5 * HOUR).toISOString();
    const merchant = (await acme.http.GET('/v1/entities/{id}', { path: { id: entityId } })).body.data.legal_name;
    expect(notice?.subject).toBe(`Upcoming mandate debit of INR 11,800.00 on ${ist.slice(0, 10)} for invoice ${inv.number} from ${merchant}`);
    expect(notice?.text).toContain(
      `${merchant} will debit INR 11,800.00 from your mandate tok_card_mandate on or after ${ist.slice(0, 10)} ${ist.slice(11, 16)} (Asia/Kolkata) for invoice ${inv.number}.`,
    );
    expect(notice?.text).toMatch(new RegExp(`https://billing\\.example\\.in/mandate-debits/${acme.tenantId}/${attempt!.id}/skip\\?token=[\\w-]+`));

    t.clock.advance(DAY + 2 * MINUTE);
    await t.kosh.worker.drain();
    expect((await invoiceOf(inv.id)).status).toBe('paid');
    expect(await chargesOf(inv.id)).toMatchObject([{ amount: 11_800_00 }]);
    const post = mailTo(email).find((m) => m.subject.startsWith('INR 11,800.00 debited'));
    expect(post?.subject).toBe(`INR 11,800.00 debited on ${ist.slice(0, 10)} for invoice ${inv.number} from ${merchant}`);
    expect(post?.text).toContain('contact grievance@acme.example.in, 080 4000 0000.');
  });

  it('the skip link cancels that one debit: never charged, the invoice stays open, the mandate is not debited for it again', async () => {
    const { customer, email } = await mandateCustomer('tok_card_mandate', { max_amount: 50_000_00, frequency: 'monthly' });
    const inv = await autoInvoice(customer, 10_000_00);
    await t.kosh.worker.drain();
    const link = /https:\/\/billing\.example\.in(\/mandate-debits\/[^\s]+)/.exec(mailTo(email)[0]?.text ?? '')?.[1];
    expect(link).toBeDefined();

    // A wrong token finds nothing; GET only shows the question (a mail scanner following the link skips nothing).
    expect((await t.call({ method: 'GET', url: link!.replace(/token=[\w-]+/, 'token=wrong') })).status).toBe(404);
    const shown = await t.call({ method: 'GET', url: link! });
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('Skip this debit');
    expect(shown.text).toContain('₹11,800.00');
    expect((await attemptsOf(inv.id))[0]!.status).toBe('pending');

    const skipped = await t.call({ method: 'POST', url: link!, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(skipped.status).toBe(200);
    expect(skipped.text).toContain('Skipped');
    const [attempt] = await attemptsOf(inv.id);
    expect(attempt).toMatchObject({ status: 'canceled', failure_code: 'mandate_debit_skipped' });
    // Again: nothing left to skip.
    expect((await t.call({ method: 'POST', url: link!, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' })).text).toContain(
      'can no longer be skipped',
    );

    t.clock.advance(DAY + HOUR);
    await t.kosh.worker.drain();
    expect(await chargesOf(inv.id)).toHaveLength(0);
    expect(await invoiceOf(inv.id)).toMatchObject({ status: 'open', amount_due: 11_800_00, last_payment_error: { code: 'mandate_debit_skipped' } });
    // The dunning retry's charge job does not debit the mandate for this invoice again.
    await enqueueJob(t.database.db, t.clock.now(), { kind: 'collections.charge_invoices', tenantId: acme.tenantId, payload: { invoice_ids: [inv.id] } });
    await t.kosh.worker.drain();
    expect(await attemptsOf(inv.id)).toHaveLength(1);
  });
});

describe('UPI AutoPay: NPCI peak hours and the retry limit', () => {
  it('moves a debit due in peak hours to the end of the window (hand-worked instants)', () => {
    // 10:30 IST (05:00Z) → 13:00 IST (07:30Z); 09:59:59 IST stays; 17:30 IST (12:00Z) → 21:30 IST (16:00Z); 21:30 IST stays.
    expect(outsideUpiPeak(new Date('2026-04-02T05:00:00Z')).toISOString()).toBe('2026-04-02T07:30:00.000Z');
    expect(outsideUpiPeak(new Date('2026-04-02T04:29:59Z')).toISOString()).toBe('2026-04-02T04:29:59.000Z');
    expect(outsideUpiPeak(new Date('2026-04-02T12:00:00Z')).toISOString()).toBe('2026-04-02T16:00:00.000Z');
    expect(outsideUpiPeak(new Date('2026-04-02T16:00:00Z')).toISOString()).toBe('2026-04-02T16:00:00.000Z');
    // 12:59:59 IST is still peak; 13:00 IST is not.
    expect(outsideUpiPeak(new Date('2026-04-02T07:29:59Z')).toISOString()).toBe('2026-04-02T07:30:00.000Z');
    expect(outsideUpiPeak(new Date('2026-04-02T07:30:00Z')).toISOString()).toBe('2026-04-02T07:30:00.000Z');
  });

  it('a UPI debit whose notice ends at 11:00 IST is made at 13:00 IST, and a fifth debit after four failures is refused', async () => {
    // Move the clock so that now + 24 h is 11:00 IST (05:30Z).
    const now = t.clock.now().getTime();
    const target = Math.ceil((now + DAY - 5.5 * HOUR) / DAY) * DAY + 5.5 * HOUR;
    t.clock.advance(target - (now + DAY));
    const { customer } = await mandateCustomer('tok_upi_autopay_insufficient', { max_amount: 10_000_00, frequency: 'monthly' });
    const inv = await createInvoice(acme, customer, [1_000_00]);
    for (let n = 1; n <= 4; n++) {
      const started = t.clock.now().getTime();
      const res = await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: {} });
      expect(res.status, res.text).toBe(200);
      const pending = (await attemptsOf(inv.id)).find((a: { status: string }) => a.status === 'pending');
      const due = new Date(pending!.charge_after!).getTime();
      if (n === 1) expect(due - started).toBe(DAY + 2 * HOUR); // 11:00 IST + 2 h = 13:00 IST
      // Not in the peak window, at most the window's length later.
      expect(outsideUpiPeak(new Date(due)).getTime()).toBe(due);
      t.clock.advance(due - t.clock.now().getTime() + 2 * MINUTE);
      await t.kosh.worker.drain();
      expect((await attemptsOf(inv.id)).filter((a: { status: string }) => a.status === 'failed')).toHaveLength(n);
    }
    const fifth = await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: {} });
    expect(fifth.status).toBe(409);
    expect(fifth.error!.reason).toBe('autopay_retry_limit');
    expect(await chargesOf(inv.id)).toHaveLength(4);
  });
});
