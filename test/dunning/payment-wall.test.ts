import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { dataOf as ok } from '../support/typed-api.js';
import { emitEvent } from '../../src/platform/events/events.js';

/**
 * DESIGN §12: a customer walled by dunning stays blocked until the invoice is paid (or voided, or
 * credited to zero) — also after the campaign gives up (`exhausted`). And a campaign's first
 * step, when due at once, runs within seconds of the execution starting.
 */

let t: TestKosh;
const HOUR = 3_600_000;

async function advance(hours: number) {
  t.clock.set(new Date(t.clock.now().getTime() + hours * HOUR));
  await t.kosh.worker.drain();
  await t.kosh.worker.drain();
}

/** A tenant whose default campaign (trigger `trigger`) is `steps`, with one customer and one ₹1,180.00 invoice due in an hour. */
async function walledSetup(
  steps: { delay_hours: number; channel: 'email' | 'sms' | 'in_app' | 'retry_payment'; is_payment_wall?: boolean }[],
  trigger: 'invoice_overdue' | 'payment_failed' = 'invoice_overdue',
) {
  const tenant = await t.registerTenant({ gstin: gstinFor('29') }); // ₹1,000.00 + 18 % GST = ₹1,180.00
  const campaign = await ok(
    tenant.http.POST('/v1/dunning-campaigns', { body: { name: 'Wall', is_default: true, trigger_event: trigger, exhausted_action: 'nothing' } }),
  );
  for (const step of steps) await ok(tenant.http.POST('/v1/dunning-campaigns/{id}/steps', { path: { id: campaign.id }, body: step }));
  const customer = await ok(tenant.http.POST('/v1/customers', { body: { email: `walled-${campaign.id.slice(-6)}@dunning.test`, name: 'Walled' } }));
  const invoice = await ok(
    tenant.http.POST('/v1/invoices', {
      body: {
        customer_id: customer.id,
        currency: 'INR',
        due_date: new Date(t.clock.now().getTime() + HOUR).toISOString(),
        lines: [{ description: 'Service', quantity: 1, unit_amount: 100000, hsn_code: '998314' }],
      },
    }),
  );
  return { tenant, customer, invoice };
}

const access = (tenant: Tenant, customerId: string) => ok(tenant.http.GET('/v1/customers/{id}/access', { path: { id: customerId } }));
const executionOf = async (tenant: Tenant, invoiceId: string) =>
  (await ok(tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoiceId } })))[0]!;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set(new Date('2026-04-01T09:00:00Z'));
});
afterAll(() => t?.close());

describe('the payment wall after the campaign gives up', () => {
  it('stays up when the last step raised it and the campaign ends exhausted; comes down when the invoice is paid', async () => {
    const { tenant, customer, invoice } = await walledSetup([
      { delay_hours: 0, channel: 'in_app' },
      { delay_hours: 24, channel: 'in_app', is_payment_wall: true },
    ]);
    await advance(2); // overdue: the scan starts dunning, the first step runs
    await advance(24); // the last step raises the wall
    await advance(1); // nothing left: the campaign ends
    expect(await executionOf(tenant, invoice.id)).toMatchObject({ status: 'exhausted', payment_wall_active: true });
    expect(await access(tenant, customer.id)).toMatchObject({ blocked: true, reason: 'payment_wall', invoice_ids: [invoice.id] });

    await advance(24 * 7); // a week on, unpaid: still blocked
    expect((await access(tenant, customer.id)).blocked).toBe(true);

    await ok(
      tenant.http.POST('/v1/payments/offline', { body: { customer_id: customer.id, invoice_id: invoice.id, payment_type: 'bank_transfer', amount: 118000 } }),
    );
    expect(await access(tenant, customer.id)).toEqual({ blocked: false, reason: null, invoice_ids: [], blocked_since: null });
    expect(await executionOf(tenant, invoice.id)).toMatchObject({ status: 'exhausted', payment_wall_active: false });
    const lifted = await ok(tenant.http.GET('/v1/events', { query: { type: 'dunning.payment_wall_lifted' } }));
    expect(lifted.map((e) => e.data.object.reason)).toEqual(['recovered']);
  });

  it('comes down when the invoice is voided', async () => {
    const { tenant, customer, invoice } = await walledSetup([{ delay_hours: 0, channel: 'in_app', is_payment_wall: true }]);
    await advance(2);
    await advance(1);
    expect(await executionOf(tenant, invoice.id)).toMatchObject({ status: 'exhausted', payment_wall_active: true });
    expect((await access(tenant, customer.id)).blocked).toBe(true);
    await ok(tenant.http.POST('/v1/invoices/{id}/void', { path: { id: invoice.id } }));
    expect((await access(tenant, customer.id)).blocked).toBe(false);
  });

  it('a campaign that never raised the wall leaves the customer unblocked when it ends', async () => {
    const { tenant, customer, invoice } = await walledSetup([{ delay_hours: 0, channel: 'in_app' }]);
    await advance(2);
    await advance(1);
    expect(await executionOf(tenant, invoice.id)).toMatchObject({ status: 'exhausted', payment_wall_active: false });
    expect((await access(tenant, customer.id)).blocked).toBe(false);
  });
});

describe('a step due at once', () => {
  it('runs within seconds of the execution starting, not at the next minute sweep', async () => {
    const { tenant, customer, invoice } = await walledSetup([{ delay_hours: 0, channel: 'in_app' }], 'payment_failed');
    await t.kosh.worker.drain(); // this minute's sweep has run: only a job queued now can run the step
    await t.kosh.deps.db
      .transaction()
      .execute((tx) =>
        emitEvent({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, 'invoice.payment_failed', { id: invoice.id, customer_id: customer.id }),
      );
    await t.kosh.worker.drain(); // the clock has not moved
    const execution = await executionOf(tenant, invoice.id);
    expect(execution).toMatchObject({ trigger_event: 'payment_failed', steps_done: 1 });
    expect(execution.actions.map((a: { channel: string; outcome: string }) => [a.channel, a.outcome])).toEqual([['in_app', 'succeeded']]);
  });
});
