import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createInvoice } from '../../../test/support/billing.js';
import { chooseRetryTime, SMART_RETRY_MIN_SAMPLES, type RetryHistorySample } from './index.js';

const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);

describe('chooseRetryTime', () => {
  const base = at('2026-03-21T09:00:00Z'); // a Saturday

  it('keeps the step delay without enough history, and says so', () => {
    const few: RetryHistorySample[] = Array.from({ length: SMART_RETRY_MIN_SAMPLES - 1 }, (_, i) => ({
      succeeded_at: at(`2026-03-0${i + 1}T14:10:00Z`),
      after_failure: null,
    }));
    const timing = chooseRetryTime(base, 'card_declined', few);
    expect(timing.at).toEqual(base);
    expect(timing.reason).toBe('step delay: 9 successful charges in 180 days, fewer than 10 to learn from');
  });

  it('moves the retry to the hour most successes happened in, within the next day', () => {
    const history: RetryHistorySample[] = [
      ...Array.from({ length: 8 }, (_, i) => ({ succeeded_at: at(`2026-02-${String(i + 10).padStart(2, '0')}T14:30:00Z`), after_failure: null })),
      ...Array.from({ length: 4 }, (_, i) => ({ succeeded_at: at(`2026-02-${String(i + 10).padStart(2, '0')}T08:05:00Z`), after_failure: null })),
    ];
    const timing = chooseRetryTime(base, null, history);
    expect(timing.at).toEqual(at('2026-03-21T14:00:00Z'));
    expect(timing.reason).toMatch(/^smart retry at 14:00 UTC: 8 of 12 successful charges in 180 days happened in that hour/);
    // An earlier hour that has passed today comes round tomorrow.
    expect(chooseRetryTime(at('2026-03-21T15:00:00Z'), null, history).at).toEqual(at('2026-03-22T14:00:00Z'));
  });

  it("learns from retries after the invoice's own failure code when there are enough of them", () => {
    const history: RetryHistorySample[] = [
      ...Array.from({ length: 12 }, (_, i) => ({ succeeded_at: at(`2026-02-${String(i + 10).padStart(2, '0')}T14:30:00Z`), after_failure: null })),
      ...Array.from({ length: 10 }, (_, i) => ({
        succeeded_at: at(`2026-02-${String(i + 10).padStart(2, '0')}T03:00:00Z`),
        after_failure: 'insufficient_funds',
      })),
    ];
    // Salary-day style: insufficient funds recover at 03:00; other failures follow everyone's 14:00.
    expect(chooseRetryTime(base, 'insufficient_funds', history).at).toEqual(at('2026-03-22T03:00:00Z'));
    expect(chooseRetryTime(base, 'insufficient_funds', history).reason).toContain('successful retries after insufficient_funds');
    expect(chooseRetryTime(base, 'card_declined', history).at).toEqual(at('2026-03-21T14:00:00Z'));
  });

  it('reads hours and weekdays on the clock of the given time zone (Asia/Kolkata: whole hours at :30 UTC)', () => {
    // Indian customers pay at 02:00–03:00 IST on Saturday nights (20:30–21:30 UTC on Fridays), at 10:00 IST on other days.
    const history: RetryHistorySample[] = [];
    for (let week = 0; week < 10; week += 1) {
      const saturdayIst = new Date(at('2025-12-05T20:40:00Z').getTime() + week * 7 * 24 * HOUR); // Sat 02:10 IST
      history.push({ succeeded_at: saturdayIst, after_failure: null });
      for (let d = 1; d <= 5; d += 1) history.push({ succeeded_at: new Date(saturdayIst.getTime() + d * 24 * HOUR + 8 * HOUR), after_failure: null }); // 10:10 IST
    }
    const friday = at('2026-03-20T18:00:00Z'); // Friday 23:30 IST
    const ist = chooseRetryTime(friday, null, history, 'Asia/Kolkata');
    expect(ist.at).toEqual(at('2026-03-20T20:30:00Z')); // Saturday 02:00 IST
    expect(ist.reason).toMatch(/^smart retry at 02:00 Asia\/Kolkata \(20:30 UTC\): 10 of 10 successful charges on Saturdays in 180 days/);
    // The same history read in UTC sees Friday evenings, and whole UTC hours.
    const utc = chooseRetryTime(friday, null, history);
    expect(utc.at).toEqual(at('2026-03-20T20:00:00Z'));
    expect(utc.reason).toContain('on Fridays');
    // On a Tuesday the Saturday pattern does not apply: 10:00 IST (04:30 UTC).
    expect(chooseRetryTime(at('2026-03-17T00:00:00Z'), null, history, 'Asia/Kolkata').at).toEqual(at('2026-03-17T04:30:00Z'));
  });

  it('counts a weekday alone when that weekday has enough successes', () => {
    // Saturdays succeed at 18:00, every other day at 10:00.
    const history: RetryHistorySample[] = [];
    for (let week = 0; week < 10; week += 1) {
      const saturday = new Date(at('2025-12-06T18:00:00Z').getTime() + week * 7 * 24 * HOUR);
      history.push({ succeeded_at: saturday, after_failure: null });
      for (let d = 1; d <= 5; d += 1) history.push({ succeeded_at: new Date(saturday.getTime() + d * 24 * HOUR - 8 * HOUR), after_failure: null });
    }
    const timing = chooseRetryTime(base, null, history);
    expect(timing.at).toEqual(at('2026-03-21T18:00:00Z'));
    expect(timing.reason).toContain('on Saturdays');
  });
});

describe('smart retry timing in a campaign', () => {
  let t: TestKosh;
  let tenant: Tenant;

  beforeAll(async () => {
    t = await startTestKosh({ env: { KOSH_PUBLIC_URL: 'http://127.0.0.1:9' } });
    t.clock.set(at('2026-03-01T14:20:00Z'));
    tenant = await t.registerTenant();
  });
  afterAll(async () => {
    await t?.close();
  });

  async function execution(invoiceId: string) {
    const res = await tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoiceId } });
    return res.body.data[0];
  }

  it("schedules the default campaign's retry at the hour the tenant's customers pay, learned from seeded charges", async () => {
    // History: twelve automatic charges that succeeded at 10:15 in India (04:45 UTC); the tenant's entity is Indian (Asia/Kolkata).
    const payer = await createCustomer(tenant);
    expect((await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: payer }, body: { token: 'tok_visa' } })).status).toBe(201);
    for (let day = 1; day <= 12; day += 1) {
      t.clock.set(at(`2026-03-${String(day).padStart(2, '0')}T04:45:00Z`));
      const invoice = await createInvoice(tenant, payer, [1_000], { collection_method: 'charge_automatically' });
      await t.kosh.worker.drain();
      expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data.status).toBe('paid');
    }

    // A card declined at 09:00: the default campaign e-mails at once and retries after 24 h.
    t.clock.set(at('2026-03-20T09:00:00Z'));
    const debtor = await createCustomer(tenant);
    await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: debtor }, body: { token: 'tok_chargeDeclined' } });
    const invoice = await createInvoice(tenant, debtor, [5_000], { collection_method: 'charge_automatically' });
    await t.kosh.worker.drain();
    t.clock.set(at('2026-03-20T09:01:00Z')); // the step runner's next minute
    await t.kosh.worker.drain();
    let run = await execution(invoice.id);
    expect(run!.steps_done).toBe(1);
    // Not 09:00 UTC on the 21st (the step's delay; 14:30 in India) but 10:00 in India the next morning (04:30 UTC), when this tenant's charges succeed.
    expect(run!.next_step_at).toBe('2026-03-22T04:30:00.000Z');
    expect(run!.next_step_reason).toMatch(
      /^smart retry at 10:00 Asia\/Kolkata \(04:30 UTC\): 12 of 12 successful charges in 180 days happened in that hour of the day in Asia\/Kolkata/,
    );

    // At the step's delay nothing runs; at 10:00 in India the retry does, and its action says why then.
    t.clock.set(at('2026-03-21T09:30:00Z'));
    await t.kosh.worker.drain();
    expect((await execution(invoice.id))!.steps_done).toBe(1);
    t.clock.set(at('2026-03-22T04:30:00Z'));
    await t.kosh.worker.drain();
    await t.kosh.worker.drain();
    run = await execution(invoice.id);
    expect(run!.steps_done).toBe(2);
    const retry = run!.actions.find((a: { channel: string }) => a.channel === 'retry_payment');
    expect(retry!.detail).toContain('smart retry at 10:00 Asia/Kolkata (04:30 UTC)');
  });

  it('falls back to the step delay for a tenant without history', async () => {
    const fresh = await t.registerTenant();
    t.clock.set(at('2026-03-25T09:00:00Z'));
    const debtor = await createCustomer(fresh);
    await fresh.http.POST('/v1/customers/{id}/payment-methods', { path: { id: debtor }, body: { token: 'tok_chargeDeclined' } });
    const invoice = await createInvoice(fresh, debtor, [5_000], { collection_method: 'charge_automatically' });
    await t.kosh.worker.drain();
    t.clock.set(at('2026-03-25T09:01:00Z'));
    await t.kosh.worker.drain();
    const run = (await fresh.http.GET('/v1/dunning-executions', { query: { invoice_id: invoice.id } })).body.data[0];
    expect(run!.next_step_at).toBe('2026-03-26T09:00:00.000Z');
    expect(run!.next_step_reason).toBe('step delay: 0 successful charges in 180 days, fewer than 10 to learn from');
  });
});
