import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinFor } from '../support/billing.js';
import { startTestKosh, type TestKosh } from '../support/harness.js';
import { dataOf as ok } from '../support/typed-api.js';
import { emitEvent } from '../../src/platform/events/events.js';
import { newId } from '../../src/platform/ids.js';
import { runDueDunningSteps } from '../../src/flows/dunning/run-dunning.js';
import { chooseArm, RETRY_ARMS, seededRandom, type ArmStats, type RetryArm } from '../../src/modules/dunning/index.js';

/**
 * Dunning weights (SPEC 4.16, docs/decisions/0310): retries learn by Thompson sampling, per
 * context (failure code × amount band × payment method type), and the weights are served.
 */

/* ── the simulation: a seeded synthetic history, the bandit against the fixed schedule ─────── */

type SyntheticContext = { key: string; amount: number; recover: Record<RetryArm, number> };

/**
 * Three kinds of failed invoices whose best retry slot differs. Chances that a retry in each slot
 * recovers the invoice:
 * - UPI mandates short of funds (₹2,500.00): evening 45 %, everything else 10–15 %;
 * - declined cards (₹25,000.00): morning 50 %, learned hour 25 %, as scheduled 20 %, evening 15 %;
 * - expired cards (₹500.00): hardly anything works (as scheduled 8 %, the rest 5 %).
 */
const CONTEXTS: SyntheticContext[] = [
  { key: 'insufficient_funds|1k_to_10k|upi_mandate', amount: 250_000, recover: { as_scheduled: 0.1, learned_hour: 0.15, morning: 0.1, evening: 0.45 } },
  { key: 'card_declined|10k_to_100k|card', amount: 2_500_000, recover: { as_scheduled: 0.2, learned_hour: 0.25, morning: 0.5, evening: 0.15 } },
  { key: 'expired_card|under_1k|card', amount: 50_000, recover: { as_scheduled: 0.08, learned_hour: 0.05, morning: 0.05, evening: 0.05 } },
];

/** 3 000 invoices, one retry each, in turn from the three contexts; outcomes drawn from `world` (its own seed). */
function simulate(policy: 'fixed' | 'bandit', seed: number) {
  const world = seededRandom(seed);
  const choices = seededRandom(seed + 1);
  const stats: ArmStats[] = [];
  const chosen: Record<string, Record<string, number>> = {};
  let recovered = 0;
  for (let i = 0; i < 3_000; i += 1) {
    const context = CONTEXTS[i % 3]!;
    const arm: RetryArm = policy === 'fixed' ? 'as_scheduled' : chooseArm(stats, context.key, choices).arm;
    const success = world() < context.recover[arm];
    if (success) recovered += context.amount;
    let row = stats.find((s) => s.context === context.key && s.arm === arm);
    if (!row) stats.push((row = { context: context.key, arm, successes: 0, failures: 0 }));
    if (success) row.successes += 1;
    else row.failures += 1;
    chosen[context.key] ??= {};
    chosen[context.key]![arm] = (chosen[context.key]![arm] ?? 0) + 1;
  }
  return { recovered, chosen };
}

describe('the bandit against the fixed schedule (seeded simulation)', () => {
  it('recovers more revenue on the same synthetic history', () => {
    const fixed = simulate('fixed', 2026);
    const bandit = simulate('bandit', 2026);
    // Expected of the fixed schedule (as scheduled for all), 1 000 invoices per context:
    //   1 000 × (10 % × ₹2,500 + 20 % × ₹25,000 + 8 % × ₹500) = ₹250,000 + ₹5,000,000 + ₹40,000 = ₹5,290,000.
    // The best slot everywhere would give 1 000 × (45 % × ₹2,500 + 50 % × ₹25,000 + 8 % × ₹500) = ₹13,665,000;
    // the bandit pays for its exploration and lands near that.
    expect(fixed.recovered).toBeGreaterThan(480_000_000); // paise: ₹4,800,000
    expect(fixed.recovered).toBeLessThan(580_000_000);
    expect(bandit.recovered).toBeGreaterThan(fixed.recovered * 2);
    expect(bandit.recovered).toBeGreaterThan(1_250_000_000); // ₹12,500,000
    // Seed 2026 exactly: fixed ₹5,423,000, the bandit ₹13,424,500 (2.5 times as much).
    expect([fixed.recovered, bandit.recovered]).toEqual([542_300_000, 1_342_450_000]);
    // It learned each context's best slot: most retries went there (964 of 1 000 in both).
    expect(bandit.chosen['insufficient_funds|1k_to_10k|upi_mandate']!.evening).toBeGreaterThan(900);
    expect(bandit.chosen['card_declined|10k_to_100k|card']!.morning).toBeGreaterThan(900);
  });

  it('is deterministic for a seed, and wins on other seeds too', () => {
    expect(simulate('bandit', 7)).toEqual(simulate('bandit', 7));
    for (const seed of [1, 99, 31337]) expect(simulate('bandit', seed).recovered).toBeGreaterThan(simulate('fixed', seed).recovered * 1.5);
  });

  it('starts a new context from what the tenant learned elsewhere (a borrowed prior of at most 10 outcomes)', () => {
    // Elsewhere, evening recovered 90 of 100 and morning 10 of 100: scaled to 9 of 10 and 1 of 10.
    const stats: ArmStats[] = [
      { context: 'a|under_1k|card', arm: 'evening', successes: 90, failures: 10 },
      { context: 'a|under_1k|card', arm: 'morning', successes: 10, failures: 90 },
    ];
    const random = seededRandom(5);
    const picks = Array.from({ length: 200 }, () => chooseArm(stats, 'b|under_1k|card', random));
    const evening = picks[0]!.posteriors.find((p) => p.arm === 'evening')!;
    expect(evening).toMatchObject({ successes: 0, failures: 0, alpha: 10, beta: 2 }); // Beta(1 + 9, 1 + 1)
    expect(evening.expected_reward).toBeCloseTo(10 / 12, 6);
    // Evening (mean 0.83) beats the untried arms (mean 0.5) in most draws.
    expect(picks.filter((p) => p.arm === 'evening').length).toBeGreaterThan(120);
    expect(RETRY_ARMS).toEqual(['as_scheduled', 'learned_hour', 'morning', 'evening']);
  });
});

/* ── over HTTP: the tenant's retries update its weights ──────────────────────────────────── */

let t: TestKosh;
const HOUR = 3_600_000;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set(new Date('2026-04-01T09:00:00Z'));
});
afterAll(() => t?.close());

describe('GET /v1/analytics/dunning/weights', () => {
  it('is empty before any retry', async () => {
    const tenant = await t.registerTenant();
    const res = await tenant.http.GET('/v1/analytics/dunning/weights');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ algorithm: 'thompson_sampling', actions: ['as_scheduled', 'learned_hour', 'morning', 'evening'], contexts: [] });
  });

  it('learns a failure when another charge fails after a retry, and a success when the invoice is then paid', async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29') }); // ₹1,000.00 + 18 % GST = ₹1,180.00: band 1k_to_10k
    const campaign = await ok(tenant.http.POST('/v1/dunning-campaigns', { body: { name: 'Retries', is_default: true, trigger_event: 'payment_failed' } }));
    for (const step of [
      { delay_hours: 0, channel: 'in_app' },
      { delay_hours: 24, channel: 'retry_payment' },
      { delay_hours: 48, channel: 'in_app' },
      { delay_hours: 72, channel: 'retry_payment' },
    ] as const)
      await ok(tenant.http.POST('/v1/dunning-campaigns/{id}/steps', { path: { id: campaign.id }, body: step }));
    const customer = await ok(tenant.http.POST('/v1/customers', { body: { email: 'card-holder@weights.test', name: 'Card Holder' } }));
    // A saved card, as a gateway's checkout leaves it (the retry charges the default method).
    await t.kosh.deps.db
      .insertInto('payment_methods')
      .values({
        tenant_id: tenant.tenantId,
        id: newId(),
        customer_id: customer.id,
        type: 'card',
        brand: 'visa',
        last4: '4242',
        gateway: 'razorpay',
        connection_id: null,
        reference: 'token_test',
        gateway_customer_id: null,
        requires_pre_debit_notice: false,
        is_default: true,
        status: 'active',
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
      })
      .execute();
    const invoice = await ok(
      tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: customer.id,
          currency: 'INR',
          collection_method: 'charge_automatically',
          lines: [{ description: 'Service', quantity: 1, unit_amount: 100000, hsn_code: '998314' }],
        },
      }),
    );
    const env = { db: t.kosh.deps.db, clock: t.clock, config: t.config, scope: t.kosh.deps.scope };
    const failed = () =>
      t.kosh.deps.db
        .transaction()
        .execute((tx) =>
          emitEvent({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, 'invoice.payment_failed', { id: invoice.id, customer_id: customer.id }),
        );
    const execution = async () => (await ok(tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoice.id } })))[0]!;

    await failed(); // the charge failed: dunning starts
    await runDueDunningSteps(env); // step 1 (in app) runs; the bandit schedules the first retry
    const scheduled = await execution();
    // Nothing learned yet (cold start): the hour decision 0131 chooses, here the step's delay.
    expect(scheduled.next_step_reason).toBe('step delay: 0 successful charges in 180 days, fewer than 10 to learn from');
    // Never before the step's own time (a day after the start).
    expect(Date.parse(scheduled.next_step_at!)).toBeGreaterThanOrEqual(Date.parse('2026-04-02T09:00:00Z'));

    t.clock.set(new Date(Date.parse(scheduled.next_step_at!)));
    await runDueDunningSteps(env); // the retry queues a charge on the card
    const afterRetry = await execution();
    expect(afterRetry.actions[1]).toMatchObject({ channel: 'retry_payment', outcome: 'succeeded' });
    expect(afterRetry.actions[1]!.detail).toBe(
      'charge queued on the default payment method (step delay: 0 successful charges in 180 days, fewer than 10 to learn from)',
    );
    const firstArm = 'learned_hour';

    await failed(); // that charge failed too: a failure of the arm
    let weights = await ok(tenant.http.GET('/v1/analytics/dunning/weights'));
    expect(weights.contexts).toHaveLength(1);
    expect(weights.contexts[0]).toMatchObject({
      key: 'unknown|1k_to_10k|card',
      context: { failure_code: 'unknown', amount_band: '1k_to_10k', method_type: 'card' },
    });
    const first = weights.contexts[0]!.weights.find((w: { action: string }) => w.action === firstArm);
    // Beta(1, 1) and one failure: Beta(1, 2), expected reward 1/3.
    expect(first).toMatchObject({ attempts: 1, successes: 0, failures: 1, alpha: 1, beta: 2, expected_reward: 0.3333 });
    await failed(); // a second report of the same failure is not learned twice
    expect((await ok(tenant.http.GET('/v1/analytics/dunning/weights'))).contexts[0]!.weights).toEqual(weights.contexts[0]!.weights);

    t.clock.set(new Date(Date.parse((await execution()).next_step_at!)));
    await runDueDunningSteps(env); // the in-app notice at 48 h schedules the second retry, with the failure learned
    const second = await execution();
    // Now with an outcome to learn from, Thompson sampling draws the second retry's slot and says so.
    expect(second.next_step_reason).toMatch(
      /^retry (as_scheduled|learned_hour|morning|evening) at .*: Thompson sampling drew 0\.\d{3} for it, the highest \(0 of [01] such retries in unknown\|1k_to_10k\|card recovered the invoice; expected 0\.\d{3}\)/,
    );
    t.clock.set(new Date(Math.max(Date.parse(second.next_step_at!), t.clock.now().getTime() + HOUR)));
    await runDueDunningSteps(env); // the second retry
    const secondArm = /\(retry (\w+) at/.exec((await execution()).actions[3]!.detail!)![1];
    await ok(
      tenant.http.POST('/v1/payments/offline', { body: { customer_id: customer.id, invoice_id: invoice.id, payment_type: 'bank_transfer', amount: 118000 } }),
    );
    weights = await ok(tenant.http.GET('/v1/analytics/dunning/weights'));
    const byAction = Object.fromEntries(weights.contexts[0]!.weights.map((w: { action: string; successes: number; failures: number }) => [w.action, w]));
    const successes = Object.values(byAction).reduce((n: number, w) => n + (w as { successes: number }).successes, 0);
    const failures = Object.values(byAction).reduce((n: number, w) => n + (w as { failures: number }).failures, 0);
    expect([successes, failures]).toEqual([1, 1]);
    expect(byAction[secondArm!]!.successes).toBe(1);
    expect(weights.contexts[0]!.updated_at).toMatch(/^2026-04-0\dT/);
  });
});
