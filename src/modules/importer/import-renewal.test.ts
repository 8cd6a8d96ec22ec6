import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSubscription, invoicesOf, karnatakaTenant, travelTo } from '../../../test/subscriptions/helpers.js';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { jsonFileSource } from './json-source.js';
import { runImport } from './run-import.js';

let t: TestKosh;
let acme: Tenant;
let subs: Record<string, { id: string; status: string }>;

beforeAll(async () => {
  t = await startTestKosh(); // 2026-04-01T00:00:00Z
  acme = await karnatakaTenant(t);
  const source = jsonFileSource(fileURLToPath(new URL('../../../test/fixtures/import/valid.json', import.meta.url)));
  const report = await runImport(t.database.db, acme.tenantId, source, { now: () => t.clock.now() });
  expect(report.failed).toEqual([]);
  const list = await acme.http.GET('/v1/subscriptions', { query: { limit: 100 } });
  subs = Object.fromEntries((list.body.data as { external_id: string; id: string; status: string }[]).map((s) => [s.external_id, s]));
});
afterAll(() => t.close());

const statusOf = async (key: string) => (await getSubscription(acme, subs[key]!.id)).status;

describe('imported subscriptions and the billing run', () => {
  it('are not invoiced before their current_period_end, and keep their status', async () => {
    await travelTo(t, '2026-04-14T23:59:59Z');
    for (const key of Object.keys(subs)) expect(await invoicesOf(acme, subs[key]!.id), key).toEqual([]);
    expect(await statusOf('sub_001')).toBe('active');
    expect(await statusOf('sub_002')).toBe('trialing');
    expect(await statusOf('sub_003')).toBe('paused');
    expect(await statusOf('sub_004')).toBe('canceled');
  });

  // Their debt is an invoice of the source system, which Kosh cannot see: the billing run's
  // "no unsettled Kosh invoice → active again" rule must not recover them.
  it('keeps an imported past_due or unpaid subscription so until Kosh has invoiced it', async () => {
    await travelTo(t, '2026-04-14T23:59:59Z'); // the billing run (with its delinquency pass) runs again
    expect(await statusOf('sub_005')).toBe('past_due');
    expect(await statusOf('sub_006')).toBe('unpaid');
  });

  it('renews an active subscription at its current_period_end with an invoice for the next period at the plan price', async () => {
    await travelTo(t, '2026-04-15T00:00:00Z');
    const [invoice, ...more] = await invoicesOf(acme, subs.sub_001!.id);
    expect(more).toEqual([]);
    expect(invoice).toMatchObject({
      billing_reason: 'subscription_cycle',
      status: 'open',
      currency: 'INR',
      period_start: '2026-04-15T00:00:00.000Z',
      period_end: '2026-05-15T00:00:00.000Z',
      subtotal: 49_900,
      cgst_amount: 4_491,
      sgst_amount: 4_491,
      total: 58_882,
    });
    expect(invoice.lines).toEqual([expect.objectContaining({ quantity: 1, unit_amount: 49_900, period_start: '2026-04-15T00:00:00.000Z' })]);
    expect(await getSubscription(acme, subs.sub_001!.id)).toMatchObject({
      status: 'active',
      current_period_start: '2026-04-15T00:00:00.000Z',
      current_period_end: '2026-05-15T00:00:00.000Z',
      latest_invoice_id: invoice.id,
    });
    // Nothing else was due yet.
    for (const key of ['sub_002', 'sub_003', 'sub_004', 'sub_005', 'sub_006', 'sub_007']) expect(await invoicesOf(acme, subs[key]!.id), key).toEqual([]);
  });

  it('ends a trial at its current_period_end by invoicing the first paid period', async () => {
    await travelTo(t, '2026-04-20T00:00:00Z');
    const [invoice, ...more] = await invoicesOf(acme, subs.sub_002!.id);
    expect(more).toEqual([]);
    expect(invoice).toMatchObject({ period_start: '2026-04-20T00:00:00.000Z', period_end: '2027-04-20T00:00:00.000Z', subtotal: 499_900 });
    expect(await getSubscription(acme, subs.sub_002!.id)).toMatchObject({ status: 'active', current_period_end: '2027-04-20T00:00:00.000Z' });
  });

  it('ends a subscription canceled at period end without an invoice, and never bills paused or canceled ones', async () => {
    await travelTo(t, '2026-05-02T00:00:00Z');
    expect(await getSubscription(acme, subs.sub_007!.id)).toMatchObject({ status: 'canceled', ended_at: '2026-04-28T00:00:00.000Z' });
    for (const key of ['sub_003', 'sub_004', 'sub_007']) expect(await invoicesOf(acme, subs[key]!.id), key).toEqual([]);
    expect(await statusOf('sub_003')).toBe('paused');
    // A second pass at the same instant finds nothing more to do.
    const before = await acme.http.GET('/v1/invoices', { query: { limit: 1000 } });
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices', { query: { limit: 1000 } })).body.total_count).toBe(before.body.total_count);
  });
});
