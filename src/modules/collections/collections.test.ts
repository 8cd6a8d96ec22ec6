import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../../../test/support/billing.js';
import { secondActor } from '../../../test/support/operators.js';
import { onPostgresServer } from '../../../test/support/database.js';
import { startMailSink, type MailSink } from '../../../test/support/mail-sink.js';
import { outsideUpiPeak, signTestWebhook, TEST_SIGNATURE_HEADER, testGatewayJournal } from './index.js';

let t: TestKosh;
let acme: Tenant;
let sink: MailSink;
let journal: ReturnType<typeof testGatewayJournal>;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in' } });
  journal = testGatewayJournal(t.kosh.deps.scope, 'memory:');
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

async function customerWith(tenant: Tenant, ...tokens: string[]): Promise<{ customer: string; pms: string[] }> {
  const customer = await createCustomer(tenant, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
  const pms: string[] = [];
  for (const token of tokens) {
    const res = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token } });
    expect(res.status, res.text).toBe(201);
    pms.push(res.body.data.id);
  }
  return { customer, pms };
}

const pay = (invoiceId: string, body: Record<string, unknown> = {}) => acme.http.POST('/v1/invoices/{id}/pay', { path: { id: invoiceId }, body });
const attempts = async (invoiceId: string) => (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoiceId } })).body.data;
const chargesFor = (invoiceId: string) => journal.allCharges().filter((c) => c.key.startsWith('kosh_att_') && attemptsSeen.get(invoiceId)?.has(c.key.slice(9)));
const attemptsSeen = new Map<string, Set<string>>();
async function chargesOf(invoiceId: string) {
  attemptsSeen.set(invoiceId, new Set((await attempts(invoiceId)).map((a: { id: string }) => a.id)));
  return chargesFor(invoiceId);
}

async function linesOf(referenceId: string, kind: string): Promise<Record<number, number>> {
  const { rows } = await sql<{ account_code: number; net: string }>`
    SELECT l.account_code, sum(l.debit - l.credit)::text AS net FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE e.tenant_id = ${acme.tenantId} AND e.reference_id = ${referenceId} AND e.kind = ${kind} GROUP BY l.account_code`.execute(t.database.db);
  return Object.fromEntries(rows.map((r) => [r.account_code, Number(r.net)]));
}

async function eventTypes(objectId: string): Promise<string[]> {
  const res = await acme.http.GET('/v1/events', { query: { object_id: objectId, limit: 100 } });
  return res.body.data.map((e: { type: string }) => e.type);
}

async function testConnection(tenant: Tenant, secret: string): Promise<string> {
  const res = await tenant.http.POST('/v1/gateway-connections', { body: { provider: 'test', credentials: { webhook_secret: secret }, currencies: ['INR'] } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

describe('gateway connections', () => {
  it('stores credentials sealed, never echoes them, lists and deletes', async () => {
    const other = await t.registerTenant();
    const res = await other.http.POST('/v1/gateway-connections', {
      body: {
        provider: 'test',
        credentials: { webhook_secret: 'whsec_very_secret' },
        currencies: ['inr'],
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ provider: 'test', currencies: ['INR'], credential_keys: ['webhook_secret'] });
    expect(res.body.data.webhook_url).toBe(`https://billing.example.in/webhooks/gateways/test/${res.body.data.id}`);
    expect(res.text).not.toContain('whsec_very_secret');
    const stored = await t.database.db
      .selectFrom('gateway_connections')
      .select('credentials_sealed')
      .where('id', '=', res.body.data.id)
      .executeTakeFirstOrThrow();
    expect(stored.credentials_sealed).not.toContain('whsec_very_secret');
    const list = await other.http.GET('/v1/gateway-connections');
    expect(list.text).not.toContain('whsec_very_secret');
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([res.body.data.id]);
    expect((await acme.http.DELETE('/v1/gateway-connections/{id}', { path: { id: res.body.data.id } })).status).toBe(404);
    expect((await other.http.DELETE('/v1/gateway-connections/{id}', { path: { id: res.body.data.id } })).status).toBe(200);
    expect((await other.http.GET('/v1/gateway-connections')).body.data).toEqual([]);
  });

  it('answers 400 for a provider without its required credentials or not built in', async () => {
    const res = await acme.api('POST', '/v1/gateway-connections', { provider: 'nope', credentials: {} });
    expect(res.status).toBe(400);
  });
});

describe('payment methods', () => {
  it('saves cards and mandates with one default per customer', async () => {
    const { customer } = await customerWith(acme);
    const visa = await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_visa' } });
    expect(visa.status).toBe(201);
    expect(visa.body.data).toMatchObject({ type: 'card', brand: 'visa', last4: '4242', gateway: 'test', is_default: true });
    const mc = await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_mastercard', set_default: false } });
    expect(mc.body.data).toMatchObject({ brand: 'mastercard', last4: '4444', is_default: false });
    const upi = await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_upi_autopay' } });
    expect(upi.body.data).toMatchObject({ type: 'upi_mandate', is_default: true });
    let list = (await acme.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body.data;
    expect(list.filter((p: { is_default: boolean }) => p.is_default).map((p: { id: string }) => p.id)).toEqual([upi.body.data.id]);
    // Removing the default makes the newest remaining one the default.
    expect((await acme.http.DELETE('/v1/customers/{id}/payment-methods/{pm_id}', { path: { id: customer, pm_id: upi.body.data.id } })).status).toBe(200);
    list = (await acme.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body.data;
    expect(list.map((p: { id: string; is_default: boolean }) => [p.id, p.is_default])).toEqual([
      [mc.body.data.id, true],
      [visa.body.data.id, false],
    ]);
  });

  it('answers 404 for an unknown token and for a method of another customer or tenant', async () => {
    const { customer, pms } = await customerWith(acme, 'tok_visa');
    const { customer: second } = await customerWith(acme);
    const unknown = await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_nonesuch' } });
    expect(unknown.status).toBe(404);
    // An inherited property name is no token either (the fuzz suite found a 500 here once).
    for (const token of ['__proto__', 'constructor', 'toString']) {
      expect((await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token } })).status, token).toBe(404);
    }
    expect((await acme.http.DELETE('/v1/customers/{id}/payment-methods/{pm_id}', { path: { id: second, pm_id: pms[0]! } })).status).toBe(404);
    const other = await t.registerTenant();
    expect((await other.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).status).toBe(404);
    const inv = await createInvoice(acme, second, [1_000]);
    expect((await pay(inv.id, { payment_method_id: pms[0] })).status).toBe(404);
  });
});

describe('paying an invoice', () => {
  it('charges the default card once: payment, gateway clearing → receivables, invoice.paid', async () => {
    const { customer } = await customerWith(acme, 'tok_visa');
    const inv = await createInvoice(acme, customer, [100_000]); // 118 000 with GST
    const res = await pay(inv.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'paid', amount_paid: 118_000, amount_due: 0, last_payment_error: null });
    const [attempt] = await attempts(inv.id);
    expect(attempt).toMatchObject({ status: 'succeeded', amount: 118_000, currency: 'INR', gateway: 'test', failure_code: null });
    const payment = (await acme.http.GET('/v1/payments/{id}', { path: { id: attempt!.payment_id! } })).body.data;
    expect(payment).toMatchObject({ payment_type: 'card', channel: 'gateway', gateway: 'test', amount: 118_000, invoice_id: inv.id });
    expect(await linesOf(attempt!.payment_id!, 'payment.recorded')).toEqual({ 1050: 118_000, 1100: -118_000 });
    expect(await eventTypes(inv.id)).toContain('invoice.paid');
    expect(await chargesOf(inv.id)).toHaveLength(1);
    // Like every /v1 write, the payment leaves an audit record naming the key and the invoice.
    const audit = await acme.http.GET('/v1/audit-log', { query: { object_id: inv.id } });
    expect(audit.body.data.map((entry: { action: string }) => entry.action)).toContain('invoice.pay');
    // Paying it again, or a void invoice, is a conflict.
    expect((await pay(inv.id)).status).toBe(409);
    const voided = await createInvoice(acme, customer, [1_000]);
    await acme.http.POST('/v1/invoices/{id}/void', { path: { id: voided.id } });
    expect((await pay(voided.id)).status).toBe(409);
  });

  it('answers 200 with last_payment_error when the card is declined, and invoice.payment_failed', async () => {
    const { customer, pms } = await customerWith(acme, 'tok_chargeDeclined', 'tok_mastercard');
    await acme.http.POST('/v1/customers/{id}/payment-methods/{pm_id}/default', { path: { id: customer, pm_id: pms[0]! } });
    const inv = await createInvoice(acme, customer, [5_000]);
    const res = await pay(inv.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'open', amount_paid: 0, last_payment_error: { code: 'card_declined', message: 'Your card was declined.' } });
    expect((await attempts(inv.id))[0]).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
    expect(await eventTypes(inv.id)).toContain('invoice.payment_failed');
    const retry = await pay(inv.id, { payment_method_id: pms[1] });
    expect(retry.body.data).toMatchObject({ status: 'paid', last_payment_error: null });
    expect((await attempts(inv.id)).map((a: { status: string }) => a.status)).toEqual(['failed', 'succeeded']);
  });

  it('replays the same attempt for a repeated Idempotency-Key', async () => {
    const { customer } = await customerWith(acme, 'tok_visa');
    const inv = await createInvoice(acme, customer, [3_000]);
    const first = await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: {}, headers: { 'idempotency-key': `pay-${inv.id}` } });
    const again = await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: {}, headers: { 'idempotency-key': `pay-${inv.id}` } });
    expect(first.body.data.status).toBe('paid');
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data).toMatchObject({ status: 'paid', amount_paid: 3_540 });
    expect(await attempts(inv.id)).toHaveLength(1);
    expect(await chargesOf(inv.id)).toHaveLength(1);
  });

  it('resolves an unknown outcome by asking the gateway, never by charging again', async () => {
    const { customer } = await customerWith(acme, 'tok_unknown');
    const inv = await createInvoice(acme, customer, [2_000]);
    const res = await pay(inv.id);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('open');
    expect((await attempts(inv.id))[0]).toMatchObject({ status: 'pending' });
    // Another attempt while one is in flight is refused.
    const second = await pay(inv.id);
    expect(second.status).toBe(409);
    expect(second.error!.reason).toBe('payment_in_progress');
    t.clock.advance(2 * MINUTE);
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.status).toBe('paid');
    expect((await attempts(inv.id)).map((a: { status: string }) => a.status)).toEqual(['succeeded']);
    expect(await chargesOf(inv.id)).toHaveLength(1);
  });

  it.runIf(onPostgresServer)('charges once when 20 /pay calls race on one invoice', async () => {
    const { customer } = await customerWith(acme, 'tok_visa');
    const inv = await createInvoice(acme, customer, [10_000]);
    const results = await Promise.all(Array.from({ length: 20 }, () => pay(inv.id)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    const final = (await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data;
    expect(final).toMatchObject({ status: 'paid', amount_paid: 11_800 });
    expect(await attempts(inv.id)).toHaveLength(1);
    expect(await chargesOf(inv.id)).toHaveLength(1);
    const payments = (await acme.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data;
    expect(payments).toHaveLength(1);
  });
});

describe('automatic charging', () => {
  it('charges a charge_automatically subscription invoice by a job after finalizing, and its renewals', async () => {
    const { customer } = await customerWith(acme, 'tok_visa');
    const plan = await acme.http.POST('/v1/plans', {
      body: { name: 'Auto', code: `auto-${Date.now()}`, interval_unit: 'month', amount: 50_000, currency: 'INR' },
    });
    const sub = await acme.http.POST('/v1/subscriptions', {
      body: { customer_id: customer, plan_id: plan.body.data.id, collection_method: 'charge_automatically' },
    });
    expect(sub.status, sub.text).toBe(201);
    expect(sub.body.data.collection_method).toBe('charge_automatically');
    const first = sub.body.data.latest_invoice_id;
    // Finalized in the subscription's transaction, charged only by the job.
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: first! } })).body.data).toMatchObject({
      status: 'open',
      collection_method: 'charge_automatically',
    });
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: first! } })).body.data.status).toBe('paid');

    t.clock.advance(32 * 24 * HOUR);
    await t.kosh.worker.drain();
    const invoices = (await acme.http.GET('/v1/invoices', { query: { subscription_id: sub.body.data.id } })).body.data;
    expect(invoices).toHaveLength(2);
    for (const i of invoices) expect(i).toMatchObject({ status: 'paid', collection_method: 'charge_automatically' });
  });

  it('marks no_payment_method and emits invoice.payment_failed when the customer has none; send_invoice is never charged', async () => {
    const { customer } = await customerWith(acme);
    const inv = await createInvoice(acme, customer, [1_000], { collection_method: 'charge_automatically' });
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data).toMatchObject({
      status: 'open',
      last_payment_error: { code: 'no_payment_method' },
    });
    expect(await eventTypes(inv.id)).toContain('invoice.payment_failed');
    const { customer: withCard } = await customerWith(acme, 'tok_visa');
    const manual = await createInvoice(acme, withCard, [1_000]);
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: manual.id } })).body.data.status).toBe('open');
    expect(await attempts(manual.id)).toEqual([]);
  });
});

describe('UPI AutoPay mandates', () => {
  it('announces the debit by e-mail and charges no sooner than 24 hours later', async () => {
    const { customer } = await customerWith(acme, 'tok_upi_autopay');
    const email = (await acme.http.GET('/v1/customers/{id}', { path: { id: customer } })).body.data.email;
    const inv = await createInvoice(acme, customer, [20_000], { collection_method: 'charge_automatically' });
    const start = t.clock.now().getTime();
    await t.kosh.worker.drain();
    const [attempt] = await attempts(inv.id);
    // 24 hours' notice, then the first instant outside NPCI's peak hours (decision 0520).
    expect(attempt).toMatchObject({ status: 'pending', charge_after: outsideUpiPeak(new Date(start + 24 * HOUR)).toISOString() });
    const notice = sink.messages.find((m) => m.envelope.to.includes(email));
    // The shipped mandate_pre_debit template: amount, the debit's earliest time in the entity's time zone (IST for an Indian entity), the merchant (entity's legal name).
    const ist = new Date(outsideUpiPeak(new Date(start + 24 * HOUR)).getTime() + 5.5 * HOUR).toISOString();
    expect(notice?.subject).toMatch(new RegExp(`^Upcoming mandate debit of INR 236\\.00 on ${ist.slice(0, 10)} for invoice ${inv.number} from Tenant \\d+$`));
    expect(notice?.text).toContain(`on or after ${ist.slice(0, 10)} ${ist.slice(11, 16)} (Asia/Kolkata) for invoice ${inv.number}`);
    expect(notice?.html).toContain(`<strong>INR 236.00</strong>`);
    expect(notice?.headers.from).toMatch(/Tenant \d+/);

    t.clock.advance(23 * HOUR);
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.status).toBe('open');
    expect(await chargesOf(inv.id)).toHaveLength(0);

    t.clock.advance(new Date(attempt!.charge_after!).getTime() - t.clock.now().getTime() + 2 * MINUTE);
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.status).toBe('paid');
    const [done] = await attempts(inv.id);
    expect((await acme.http.GET('/v1/payments/{id}', { path: { id: done!.payment_id! } })).body.data.payment_type).toBe('upi');
    expect(await chargesOf(inv.id)).toHaveLength(1);
  });
});

describe('the mandate pre-debit template', () => {
  it('renders the tenant override, previews it, and sends it by SMTP', async () => {
    const tenant = await t.registerTenant({ name: 'Mandates Pvt Ltd', gstin: gstinFor('29') });
    const put = await tenant.http.PUT('/v1/email-templates/{name}', {
      path: { name: 'mandate_pre_debit' },
      body: {
        subject: '{{tenant.name}} will debit {{debit.amount}} on {{debit.date}}',
        html: '<p>Dear {{customer.name}}, {{debit.amount}} for {{invoice.number}} after {{debit.not_before}}. {{debit.mandate_ref}}</p>',
        text: 'Dear {{customer.name}}, {{debit.amount}} for {{invoice.number}} after {{debit.not_before}}.',
      },
    });
    expect(put.status, put.text).toBe(200);
    const listed = (await tenant.http.GET('/v1/email-templates')).body.data.map((x: { name: string }) => x.name);
    expect(listed).toContain('mandate_pre_debit');
    const preview = await tenant.http.POST('/v1/email-templates/{name}/preview', { path: { name: 'mandate_pre_debit' }, body: {} });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.subject).toBe('Mandates Pvt Ltd will debit ₹11,800.00 on 2026-04-16');
    expect(preview.body.data.missing_variables).toEqual(['debit.mandate_ref']);

    const customer = await createCustomer(tenant, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    expect((await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_upi_autopay' } })).status).toBe(201);
    const email = (await tenant.http.GET('/v1/customers/{id}', { path: { id: customer } })).body.data.email;
    const start = t.clock.now().getTime();
    const inv = await createInvoice(tenant, customer, [20_000], { collection_method: 'charge_automatically' });
    await t.kosh.worker.drain();
    const ist = new Date(start + 24 * HOUR + 5.5 * HOUR).toISOString();
    const notice = sink.messages.find((m) => m.envelope.to.includes(email));
    expect(notice?.subject).toBe(`Mandates Pvt Ltd will debit INR 236.00 on ${ist.slice(0, 10)}`);
    expect(notice?.text).toContain(`INR 236.00 for ${inv.number} after ${ist.slice(0, 10)} ${ist.slice(11, 16)} (Asia/Kolkata).`);
    expect(notice?.html).toContain('<p>Dear ');
  });
});

describe('inbound gateway webhooks', () => {
  it('verifies the signature over the raw body, applies once, and ignores duplicates', async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29') });
    const secret = 'whsec_test_hooks';
    const connection = await testConnection(tenant, secret);
    const customer = await createCustomer(tenant);
    const pm = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_pending' } });
    expect(pm.status).toBe(201);
    const inv = await createInvoice(tenant, customer, [3_000]);
    const res = await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: {} });
    expect(res.body.data.status).toBe('open');
    const [attempt] = (await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: inv.id } })).body.data;
    expect(attempt!.status).toBe('pending');
    const gatewayPaymentId = (
      await t.database.db.selectFrom('payment_attempts').select('gateway_payment_id').where('id', '=', attempt!.id).executeTakeFirstOrThrow()
    ).gateway_payment_id!;

    const body = JSON.stringify({ id: 'evt_1', type: 'payment.succeeded', data: { payment_id: gatewayPaymentId, amount: 3_540, currency: 'INR' } });
    const send = (raw: string, signature: string) =>
      t.call({
        method: 'POST',
        url: `/webhooks/gateways/test/${connection}`,
        headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: signature },
        payload: raw,
      });
    const bad = await send(body, signTestWebhook(body, 'wrong-secret', t.clock.now()));
    expect(bad.status).toBe(400);
    // The signature covers the exact bytes: re-serialized JSON does not verify.
    const reformatted = await send(JSON.stringify(JSON.parse(body), null, 2), signTestWebhook(body, secret, t.clock.now()));
    expect(reformatted.status).toBe(400);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.status).toBe('open');

    const good = await send(body, signTestWebhook(body, secret, t.clock.now()));
    expect(good.status, good.text).toBe(200);
    expect(good.body).toMatchObject({ received: true, duplicate: false });
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data).toMatchObject({ status: 'paid', amount_paid: 3_540 });
    const again = await send(body, signTestWebhook(body, secret, t.clock.now()));
    expect(again.body).toMatchObject({ duplicate: true });
    expect((await tenant.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data).toHaveLength(1);

    // A revoked mandate is no longer charged.
    const upi = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_upi_autopay' } });
    const revoke = JSON.stringify({ id: 'evt_2', type: 'mandate.revoked', data: { payment_method: 'tok_upi_autopay' } });
    expect((await send(revoke, signTestWebhook(revoke, secret, t.clock.now()))).status).toBe(200);
    const methods = (await tenant.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body.data;
    expect(methods.map((m: { id: string }) => m.id)).not.toContain(upi.body.data.id);
  });
});

describe('refunds', () => {
  async function paidInvoice(token: string) {
    const { customer } = await customerWith(acme, token);
    const inv = await createInvoice(acme, customer, [100_000]); // 118 000: 9 000 CGST + 9 000 SGST
    await pay(inv.id);
    const [attempt] = await attempts(inv.id);
    return { inv, paymentId: attempt!.payment_id as string };
  }

  it('issues a refund credit note with tax reversed pro rata, books it, and follows the gateway', async () => {
    const { inv, paymentId } = await paidInvoice('tok_visa');
    const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: paymentId }, body: { amount: 59_000, reason: 'Duplicate seat' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ payment_id: paymentId, amount: 59_000, status: 'pending', invoice_id: inv.id });
    const note = (await acme.http.GET('/v1/credit-notes/{id}', { path: { id: res.body.data.credit_note_id! } })).body.data;
    expect(note).toMatchObject({
      type: 'refund',
      refund_status: 'pending',
      amount: 59_000,
      subtotal: 50_000,
      cgst_amount: 4_500,
      sgst_amount: 4_500,
      status: 'used',
      balance: 0,
    });
    expect(await linesOf(res.body.data.id, 'refund.created')).toEqual({ 2300: 59_000, 1050: -59_000 });
    // Above what remains refundable → 400.
    expect((await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: paymentId }, body: { amount: 59_001, reason: 'too much' } })).status).toBe(400);
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: note.id } })).body.data.refund_status).toBe('processed');
    expect(await eventTypes(res.body.data.id)).toEqual(expect.arrayContaining(['refund.created', 'refund.succeeded']));
    const rest = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: paymentId }, body: { reason: 'The rest' } });
    expect(rest.body.data.amount).toBe(59_000);
    expect((await acme.http.GET('/v1/payments/{id}', { path: { id: paymentId } })).body.data.amount_refunded).toBe(118_000);
  });

  it('gives the credit back to the customer when the gateway refuses the refund', async () => {
    const { paymentId } = await paidInvoice('tok_refundFail');
    const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: paymentId }, body: { amount: 10_000, reason: 'Goodwill' } });
    await t.kosh.worker.drain();
    const note = (await acme.http.GET('/v1/credit-notes/{id}', { path: { id: res.body.data.credit_note_id! } })).body.data;
    expect(note).toMatchObject({ refund_status: 'refund_failed', status: 'issued', balance: 10_000 });
    expect(await eventTypes(res.body.data.id)).toContain('refund.failed');
    expect(await linesOf(res.body.data.id, 'refund.failed')).toEqual({ 1050: 10_000, 2300: -10_000 });
    expect((await acme.http.GET('/v1/payments/{id}', { path: { id: paymentId } })).body.data.amount_refunded).toBe(0);
  });

  it('holds a refund for approval under credit-note governance: nothing booked or sent until approved; rejected → failed', async () => {
    await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: true } });
    try {
      const { paymentId } = await paidInvoice('tok_visa');
      const held = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: paymentId }, body: { amount: 20_000, reason: 'Seat removed' } });
      expect(held.status, held.text).toBe(201);
      expect(held.body.data.status).toBe('pending');
      const heldNote = (await acme.http.GET('/v1/credit-notes/{id}', { path: { id: held.body.data.credit_note_id! } })).body.data;
      expect(heldNote).toMatchObject({ type: 'refund', status: 'pending_approval', refund_status: 'pending' });
      await t.kosh.worker.drain();
      // The gateway was not asked and nothing was booked; the amount is reserved on the payment.
      expect(journal.refund(`kosh_ref_${held.body.data.id}`), 'the gateway is not asked before approval').toBeUndefined();
      expect(await linesOf(held.body.data.id, 'refund.created')).toEqual({});
      expect(await linesOf(heldNote.id, 'credit_note.issued')).toEqual({});
      expect((await acme.http.GET('/v1/payments/{id}', { path: { id: paymentId } })).body.data.amount_refunded).toBe(20_000);

      const approved = await (await secondActor(acme))('POST', `/v1/credit-notes/${heldNote.id}/approve`);
      expect(approved.status, approved.text).toBe(200);
      expect(approved.body.data).toMatchObject({ status: 'used', balance: 0 });
      expect(await linesOf(held.body.data.id, 'refund.created')).toEqual({ 2300: 20_000, 1050: -20_000 });
      await t.kosh.worker.drain();
      expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: heldNote.id } })).body.data.refund_status).toBe('processed');
      expect(journal.refund(`kosh_ref_${held.body.data.id}`)?.amount).toBe(20_000);
      expect(await eventTypes(held.body.data.id)).toEqual(expect.arrayContaining(['refund.created', 'refund.succeeded']));

      const refused = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: paymentId }, body: { amount: 5_000, reason: 'Asked twice' } });
      const refusedNote = refused.body.data.credit_note_id;
      expect((await acme.http.POST('/v1/credit-notes/{id}/reject', { path: { id: refusedNote! } })).status).toBe(200);
      expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: refusedNote! } })).body.data).toMatchObject({
        status: 'rejected',
        refund_status: 'refund_failed',
      });
      expect(await eventTypes(refused.body.data.id)).toContain('refund.failed');
      expect(await linesOf(refused.body.data.id, 'refund.created')).toEqual({});
      expect((await acme.http.GET('/v1/payments/{id}', { path: { id: paymentId } })).body.data.amount_refunded).toBe(20_000);
      await t.kosh.worker.drain();
      expect(await linesOf(refused.body.data.id, 'refund.failed')).toEqual({});
      expect(journal.refund(`kosh_ref_${refused.body.data.id}`), 'a rejected refund never reaches the gateway').toBeUndefined();
    } finally {
      await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: false } });
    }
  });

  it('marks refunds of offline payments manual_required', async () => {
    const { customer } = await customerWith(acme);
    const inv = await createInvoice(acme, customer, [1_000]);
    const payment = await acme.http.POST('/v1/payments/offline', {
      body: { customer_id: customer, invoice_id: inv.id, payment_type: 'bank_transfer', amount: 1_180 },
    });
    const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: payment.body.data.id }, body: { reason: 'Cancelled' } });
    expect(res.status).toBe(201);
    expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: res.body.data.credit_note_id! } })).body.data.refund_status).toBe('manual_required');
    expect(await linesOf(res.body.data.id, 'refund.created')).toEqual({ 2300: 1_180, 2320: -1_180 });
  });
});

describe('settlement', () => {
  it('moves a gateway payment from clearing to cash once the gateway has paid it out', async () => {
    const { customer } = await customerWith(acme, 'tok_visa');
    const inv = await createInvoice(acme, customer, [4_000]);
    await pay(inv.id);
    const [attempt] = await attempts(inv.id);
    t.clock.advance(49 * HOUR);
    await t.kosh.worker.drain();
    expect(await linesOf(attempt!.payment_id!, 'payment.settled')).toEqual({ 1000: 4_720, 1050: -4_720 });
  });
});

describe('Kosh checkout page while a mandate debit is scheduled', () => {
  it('says so, and its card form does not start a second attempt (docs/decisions/0196)', async () => {
    const { customer } = await customerWith(acme, 'tok_upi_autopay');
    const inv = await createInvoice(acme, customer, [1_000]);
    expect((await pay(inv.id)).status).toBe(200);
    const session = await acme.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: inv.id } });
    expect(session.status, session.text).toBe(201);
    const url = new URL(session.body.data.url);
    const page = await t.kosh.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(page.statusCode).toBe(200);
    const chargeAfter = (await attempts(inv.id))[0]!.charge_after as string;
    expect(page.body).toContain(`A mandate debit of INR ${(inv.total / 100).toFixed(2)} for this invoice is scheduled on or after ${chargeAfter}`);
    const posted = await t.kosh.app.inject({
      method: 'POST',
      url: url.pathname + url.search,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'card_number=4242424242424242',
    });
    expect(posted.statusCode).toBe(303);
    expect((await attempts(inv.id)).map((a: { status: string }) => a.status)).toEqual(['pending']);
    // Without a scheduled debit the page has no such line.
    const other = await createInvoice(acme, customer, [1_000]);
    const plain = new URL((await acme.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: other.id } })).body.data.url);
    expect((await t.kosh.app.inject({ method: 'GET', url: plain.pathname + plain.search })).body).not.toContain('mandate debit');
  });
});

describe('routing', () => {
  it('answers 400 no_gateway_for_currency in live mode without a connection for the currency', async () => {
    const live = await startTestKosh({ env: { KOSH_MODE: 'live', KOSH_REGISTRATION: 'open' } });
    try {
      const tenant = await live.registerTenant();
      const customer = await createCustomer(tenant);
      const inv = await createInvoice(tenant, customer, [1_000]);
      const res = await tenant.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: inv.id } });
      expect(res.status).toBe(400);
      expect(res.error!.reason).toBe('no_gateway_for_currency');
    } finally {
      await live.close();
    }
  });
});
