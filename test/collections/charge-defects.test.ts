/**
 * Only the gateway's failures make a charge's outcome unknown (issue #27): a timeout, a reset
 * connection or a 5xx leaves the attempt pending as `unknown` for the sweep's lookup, while a
 * defect of Kosh's own — here a TypeError on an answer the gateway should never give — is not
 * written down as an unknown outcome: it fails the charge job, and the attempt stays exactly as
 * its start committed it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRazorpayServer, type RazorpayServer } from '../support/razorpay-server.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

let server: RazorpayServer;
let t: TestKosh;
let tenant: Tenant;

beforeAll(async () => {
  server = await startRazorpayServer();
  t = await startTestKosh({ env: { KOSH_RAZORPAY_API_BASE: server.url } });
  tenant = await t.registerTenant();
  const res = await tenant.http.POST('/v1/gateway-connections', {
    body: {
      provider: 'razorpay',
      credentials: { key_id: server.keyId, key_secret: server.keySecret, webhook_secret: server.webhookSecret },
      currencies: ['INR'],
    },
  });
  expect(res.status, res.text).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

const HOUR = 3_600_000;

/**
 * A customer with a saved Razorpay card (a recurring token: its debits are announced 24 hours
 * ahead) and a charge_automatically invoice, finalized: its attempt waits out the notice.
 */
async function invoiceToCharge(n: number): Promise<string> {
  const email = `${n}.defects@asha.example.in`;
  const contact = '+919900000002';
  const customer = (
    await tenant.http.POST('/v1/customers', { body: { email, name: 'Asha Rao', phone: contact, billing_address: { state_code: '29', country: 'IN' } } })
  ).body.data;
  const { tokenId } = server.addToken({ email, contact, method: 'card', network: 'Visa', last4: '1111' });
  expect((await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer.id }, body: { token: tokenId } })).status).toBe(201);
  const invoice = await tenant.http.POST('/v1/invoices', {
    body: {
      customer_id: customer.id,
      currency: 'INR',
      collection_method: 'charge_automatically',
      lines: [{ description: 'Seats', unit_amount: 50000 }],
      auto_finalize: true,
    },
  });
  expect(invoice.status, invoice.text).toBe(201);
  await t.kosh.worker.drain();
  expect(await attemptOf(invoice.body.data.id)).toEqual({ status: 'pending', pending_reason: 'notice' });
  return invoice.body.data.id;
}

async function attemptOf(invoiceId: string) {
  return t.kosh.deps.db.selectFrom('payment_attempts').select(['status', 'pending_reason']).where('invoice_id', '=', invoiceId).executeTakeFirstOrThrow();
}

describe('debiting a mandate once its notice is served', () => {
  it('does not record a defect of its own as an unknown outcome: the sweep fails and the attempt stays as it committed it', async () => {
    const invoiceId = await invoiceToCharge(1);
    // The order search answers 200 with a list whose item is no order: reading it is a TypeError.
    server.fault({ method: 'GET', path: '/v1/orders', kind: 'status', status: 200, body: { entity: 'collection', count: 1, items: [null] }, times: 100 });
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    server.clearFaults();

    // Claimed for the gateway (`notice` → `charging`, committed before the call), and no more.
    expect(await attemptOf(invoiceId)).toEqual({ status: 'pending', pending_reason: 'charging' });
    // The jobs that asked (the charge due after the notice, the sweep) failed on it, to be retried.
    const failed = await t.kosh.deps.db
      .selectFrom('jobs')
      .select(['kind', 'state', 'last_error'])
      .where('kind', 'in', ['collections.charge_invoices', 'collections.resolve_attempts'])
      .where('last_error', 'is not', null)
      .execute();
    expect(failed.length).toBeGreaterThan(0);
    for (const job of failed) {
      expect(job.state).toBe('pending');
      expect(job.last_error).toMatch(/Cannot read properties of null/);
    }
    expect(server.requestsTo('POST', '/v1/payments/create/recurring')).toHaveLength(0);
  });

  it('records a gateway that stops answering as an unknown outcome, left pending for the next lookup', async () => {
    const invoiceId = await invoiceToCharge(2);
    // Every try of the order search (the adapter's own retries included) answers 503.
    server.fault({ method: 'GET', path: '/v1/orders', kind: 'status', status: 503, times: 100 });
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    server.clearFaults();

    expect(await attemptOf(invoiceId)).toEqual({ status: 'pending', pending_reason: 'unknown' });
    expect(server.requestsTo('POST', '/v1/payments/create/recurring')).toHaveLength(0);
  });
});
