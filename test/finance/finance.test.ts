import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cumulativeTarget } from '../../src/modules/finance/index.js';
import { accountId, ledgerNumber, ledgerParts, PostgresSecondaryLedger, syncSecondaryLedger } from '../../src/modules/ledger/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice } from '../support/billing.js';
import { expectBalancedTrialBalances, reconcileTenant } from '../support/reconciliation.js';

let t: TestKosh;

beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(() => t?.close());

const db = () => t.database.db;

/** A tenant with finalized invoices in INR and USD, a partial payment with TDS, an advance, credit notes. */
async function busyTenant(): Promise<{ tenant: Tenant; invoices: string[]; customer: string }> {
  const tenant = await t.registerTenant();
  const customer = await createCustomer(tenant);
  const invoices: string[] = [];
  for (const amounts of [[100_000], [25_000, 5_000], [77_777]]) invoices.push((await createInvoice(tenant, customer, amounts)).id);
  const usd = await createInvoice(tenant, customer, [12_345], { currency: 'USD', exchange_rate: '84.5' });
  invoices.push(usd.id);
  const first = (await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoices[0]! } })).body.data;
  const pay = await tenant.http.POST('/v1/payments/offline', {
    body: {
      customer_id: customer,
      invoice_id: invoices[0],
      payment_type: 'bank_transfer',
      currency: 'INR',
      amount: first.amount_due - 2_000,
      tds_amount: 2_000,
    },
  });
  expect(pay.status, pay.text).toBe(201);
  const advance = await tenant.http.POST('/v1/payments/offline', { body: { customer_id: customer, payment_type: 'cash', currency: 'INR', amount: 5_000 } });
  expect(advance.status, advance.text).toBe(201);
  const note = await tenant.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoices[1], amount: 10_000 } });
  expect(note.status, note.text).toBe(201);
  const goodwill = await tenant.http.POST('/v1/credit-notes', { body: { customer_id: customer, amount: 3_000, currency: 'INR' } });
  expect(goodwill.status, goodwill.text).toBe(201);
  const apply = await tenant.http.POST('/v1/credit-notes/{id}/apply', {
    path: { id: goodwill.body.data.id },
    body: { invoice_id: invoices[2]!, amount: 1_000 },
  });
  expect(apply.status, apply.text).toBe(200);
  return { tenant, invoices, customer };
}

async function completedRun(tenant: Tenant, body: Record<string, unknown> = {}) {
  const started = await tenant.http.POST('/v1/finance/reconciliation/runs', { body });
  expect(started.status, started.text).toBe(202);
  expect(started.body.data.status).toBe('running');
  await t.kosh.worker.drain();
  const res = await tenant.http.GET('/v1/finance/reconciliation/runs/{id}', { path: { id: started.body.data.id } });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.status).toBe('completed');
  return res.body.data;
}

/** Runs statements with the ledger's append-only triggers off (fault injection only). */
async function tamper(table: 'journal_lines' | 'tb_transfers' | 'invoices', trigger: string | null, statement: ReturnType<typeof sql>) {
  await db()
    .transaction()
    .execute(async (tx) => {
      if (trigger) await sql`ALTER TABLE ${sql.table(table)} DISABLE TRIGGER ${sql.ref(trigger)}`.execute(tx);
      await statement.execute(tx);
      if (trigger) await sql`ALTER TABLE ${sql.table(table)} ENABLE TRIGGER ${sql.ref(trigger)}`.execute(tx);
    });
}

async function finalizationEntry(tenant: Tenant, invoiceId: string): Promise<string> {
  const entries = (await tenant.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoiceId } })).body.data;
  return entries.find((e: { kind: string }) => e.kind === 'invoice.finalized')!.id;
}

describe('secondary ledger', () => {
  it('maps entity × currency to a u32 ledger and back, and derives account ids deterministically', () => {
    expect(ledgerParts(ledgerNumber(1, 'INR'))).toEqual({ tbLedgerId: 1, currency: 'INR' });
    expect(ledgerParts(ledgerNumber(131_071, 'ZZZ'))).toEqual({ tbLedgerId: 131_071, currency: 'ZZZ' });
    expect(ledgerNumber(1, 'INR')).toBe(38_531);
    expect(ledgerNumber(1, 'INR')).not.toBe(ledgerNumber(1, 'USD'));
    const tenant = '0190f0a0-0000-7000-8000-000000000001';
    expect(accountId(tenant, 32_768, 1100)).toBe(accountId(tenant, 32_768, 1100));
    expect(accountId(tenant, 32_768, 1100).slice(19)).toBe('0000-8000044c0000');
  });

  it('gets one transfer per journal line through the feed job, with balances equal to the journal', async () => {
    const { tenant } = await busyTenant();
    t.clock.advance(60_000); // the feed's next slot
    await t.kosh.worker.drain();
    const lines = await db().selectFrom('journal_lines').select(['id', 'debit', 'credit', 'entry_id']).where('tenant_id', '=', tenant.tenantId).execute();
    const transfers = await db().selectFrom('tb_transfers').selectAll().where('tenant_id', '=', tenant.tenantId).execute();
    expect(transfers.length).toBe(lines.length);
    const byId = new Map(transfers.map((x) => [x.id, x]));
    for (const l of lines) {
      expect(byId.get(l.id)?.amount).toBe(l.debit + l.credit);
      expect(byId.get(l.id)?.user_data_128).toBe(l.entry_id);
    }
    // The last transfer of each entry ends the linked chain.
    const unlinked = transfers.filter((x) => x.flags === 0).length;
    expect(unlinked).toBe(new Set(lines.map((l) => l.entry_id)).size);
  });

  it('treats a transfer written twice as a no-op that checks equality (exists / exists_with_different_fields)', async () => {
    const { tenant } = await busyTenant();
    await syncSecondaryLedger(db(), tenant.tenantId, t.clock.now());
    const before = await db()
      .selectFrom('tb_accounts')
      .select(['id', 'debits_posted', 'credits_posted'])
      .where('tenant_id', '=', tenant.tenantId)
      .orderBy('id')
      .execute();
    const one = await db().selectFrom('tb_transfers').selectAll().where('tenant_id', '=', tenant.tenantId).limit(1).executeTakeFirstOrThrow();
    const { tenant_id: _t, timestamp: _ts, ...transfer } = one;
    const results = await db()
      .transaction()
      .execute((tx) =>
        new PostgresSecondaryLedger(tx, t.clock.now()).createTransfers(tenant.tenantId, [transfer, { ...transfer, amount: transfer.amount + 1 }]),
      );
    expect(results).toEqual(['exists', 'exists_with_different_fields']);
    // Re-feeding every entry changes nothing either.
    await db()
      .insertInto('tb_outbox')
      .columns(['tenant_id', 'entry_id'])
      .expression(db().selectFrom('journal_entries').select(['tenant_id', 'id']).where('tenant_id', '=', tenant.tenantId))
      .execute();
    await syncSecondaryLedger(db(), tenant.tenantId, t.clock.now());
    const after = await db()
      .selectFrom('tb_accounts')
      .select(['id', 'debits_posted', 'credits_posted'])
      .where('tenant_id', '=', tenant.tenantId)
      .orderBy('id')
      .execute();
    expect(after).toEqual(before);
  });
});

describe('reconciliation runs', () => {
  describe('POST /v1/finance/reconciliation/runs', () => {
    it('reconciles a clean tenant with invoices, payments and credit notes to zero discrepancies', async () => {
      const { tenant } = await busyTenant();
      const run = await completedRun(tenant);
      expect(run.discrepancies).toEqual([]);
      expect(await expectBalancedTrialBalances(tenant)).toBe(2);
      expect(run).toMatchObject({
        total_discrepancies: 0,
        discrepancy_count: 0,
        discrepancies_truncated: false,
        tb_compared: true,
        run_by: expect.any(String),
      });
      expect(run.invoices_checked).toBe(4);
      expect(run.checked).toMatchObject({ invoices: 4, payments: 2, credit_notes: 2 });
      expect(run.checked.journal_entries).toBeGreaterThanOrEqual(9);
      expect(run.tb_transfers_checked).toBeGreaterThan(run.checked.journal_entries);
      expect(run.tb_accounts_checked).toBeGreaterThan(0);
      const events = await tenant.http.GET('/v1/events', { query: { type: 'reconciliation.completed' } });
      expect(events.body.data[0]!.data.object).toMatchObject({ id: run.id, total_discrepancies: 0 });
      const latest = await tenant.http.GET('/v1/finance/reconciliation');
      expect(latest.body.data.id).toBe(run.id);
      const list = await tenant.http.GET('/v1/finance/reconciliation/runs');
      expect(list.body).toMatchObject({ object: 'list', total_count: 1, data: [{ id: run.id }] });
      const primary = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
      const scoped = await completedRun(tenant, { entity_id: primary });
      expect(scoped).toMatchObject({ entity_id: primary, total_discrepancies: 0, invoices_checked: 4 });
    });

    it('answers 409 with the running run id while one runs for the same entity, and 404 for another tenant’s entity', async () => {
      const tenant = await t.registerTenant();
      const other = await t.registerTenant();
      const first = await tenant.http.POST('/v1/finance/reconciliation/runs', { body: {} });
      const second = await tenant.http.POST('/v1/finance/reconciliation/runs', { body: {} });
      expect(second.status).toBe(409);
      expect(second.error!.details).toEqual([{ field: 'running_run_id', message: first.body.data.id }]);
      const otherEntity = (await other.http.GET('/v1/entities')).body.data[0]!.id;
      expect((await tenant.http.POST('/v1/finance/reconciliation/runs', { body: { entity_id: otherEntity } })).status).toBe(404);
      expect((await other.http.GET('/v1/finance/reconciliation/runs/{id}', { path: { id: first.body.data.id } })).status).toBe(404);
      await t.kosh.worker.drain();
      expect((await tenant.http.POST('/v1/finance/reconciliation/runs', { body: {} })).status).toBe(202);
      await t.kosh.worker.drain();
    });

    it('finds a journal amount tampered in SQL: amount_mismatch and receivable_mismatch on the invoice, tb_amount_mismatch on the line', async () => {
      const { tenant, invoices } = await busyTenant();
      await syncSecondaryLedger(db(), tenant.tenantId, t.clock.now());
      const invoiceId = invoices[2]!;
      const entryId = await finalizationEntry(tenant, invoiceId);
      await tamper(
        'journal_lines',
        'journal_lines_append_only',
        sql`UPDATE journal_lines SET debit = debit + 100 WHERE tenant_id = ${tenant.tenantId} AND entry_id = ${entryId} AND account_code = 1100`,
      );
      const run = await completedRun(tenant);
      const types = run.discrepancies!.map((d: { type: string }) => d.type);
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({ type: 'amount_mismatch', invoice_id: invoiceId, transaction_id: entryId, found_amount: expect.any(Number) }),
      );
      const mismatch = run.discrepancies!.find((d: { type: string }) => d.type === 'amount_mismatch');
      expect(mismatch!.found_amount - mismatch!.expected_amount).toBe(100);
      expect(run.discrepancies).toContainEqual(expect.objectContaining({ type: 'receivable_mismatch', invoice_id: invoiceId, account_code: 1100 }));
      expect(run.discrepancies).toContainEqual(expect.objectContaining({ type: 'tb_amount_mismatch', transaction_id: entryId, account_code: 1100 }));
      expect(types).toContain('tb_balance_mismatch');
      expect(run.total_discrepancies).toBe(run.discrepancies!.length);
    });

    it('finds a dropped transfer: tb_missing_transfer on its entry (the account totals posted by it stay)', async () => {
      const { tenant, invoices } = await busyTenant();
      await syncSecondaryLedger(db(), tenant.tenantId, t.clock.now());
      const entryId = await finalizationEntry(tenant, invoices[0]!);
      await tamper(
        'tb_transfers',
        'tb_transfers_immutable',
        sql`DELETE FROM tb_transfers WHERE tenant_id = ${tenant.tenantId} AND id = (SELECT id FROM journal_lines WHERE tenant_id = ${tenant.tenantId} AND entry_id = ${entryId} AND account_code = 4000)`,
      );
      const run = await completedRun(tenant);
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({ type: 'tb_missing_transfer', transaction_id: entryId, invoice_id: invoices[0], account_code: 4000 }),
      );
      expect(run.total_discrepancies).toBe(1);
    });

    it('finds an invoice total changed in SQL and a payment without its entry', async () => {
      const { tenant, invoices, customer } = await busyTenant();
      const invoiceId = invoices[3]!;
      await tamper(
        'invoices',
        null,
        sql`UPDATE invoices SET subtotal = subtotal + 500, total = total + 500, amount_due = amount_due + 500 WHERE tenant_id = ${tenant.tenantId} AND id = ${invoiceId}`,
      );
      const paymentId = '0190f0a0-0000-7000-8000-0000000000aa';
      await sql`INSERT INTO payments (tenant_id, id, customer_id, payment_type, amount, currency, recorded_at, created_at, updated_at)
                VALUES (${tenant.tenantId}, ${paymentId}, ${customer}, 'cash', 700, 'INR', now(), now(), now())`.execute(db());
      const run = await completedRun(tenant);
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({ type: 'amount_mismatch', invoice_id: invoiceId, transaction_id: await finalizationEntry(tenant, invoiceId) }),
      );
      expect(run.discrepancies).toContainEqual(expect.objectContaining({ type: 'receivable_mismatch', invoice_id: invoiceId }));
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({ type: 'missing_payment_transaction', reference_id: paymentId, expected_amount: 700, found_amount: 0 }),
      );
      expect(run.discrepancies!.filter((d: { type: string }) => d.type.startsWith('tb_'))).toEqual([]);
    });

    it('stores at most 1 000 discrepancies and says the rest were cut (discrepancies_truncated), counting them all', async () => {
      const tenant = await t.registerTenant();
      const customer = await createCustomer(tenant);
      await sql`INSERT INTO payments (tenant_id, id, customer_id, payment_type, amount, currency, recorded_at, created_at, updated_at)
                SELECT ${tenant.tenantId}::uuid, gen_random_uuid(), ${customer}::uuid, 'cash', 100 + g, 'INR', now(), now(), now()
                FROM generate_series(1, 1005) g`.execute(db());
      const run = await completedRun(tenant);
      expect(run.total_discrepancies).toBe(1005);
      expect(run.discrepancies).toHaveLength(1000);
      expect(run.discrepancies_truncated).toBe(true);
      expect(new Set(run.discrepancies!.map((d: { type: string }) => d.type))).toEqual(new Set(['missing_payment_transaction']));
    });
  });
});

describe('daily reconciliation', () => {
  it('runs once a day for every tenant, as a system run (run_by null), and reports a tampered account total', async () => {
    const { tenant } = await busyTenant();
    await syncSecondaryLedger(db(), tenant.tenantId, t.clock.now());
    await sql`UPDATE tb_accounts SET credits_posted = credits_posted + 7 WHERE tenant_id = ${tenant.tenantId} AND code = 1100 AND currency = 'INR'`.execute(
      db(),
    );
    t.clock.advance(24 * 3_600_000);
    await t.kosh.worker.drain();
    const latest = await tenant.http.GET('/v1/finance/reconciliation');
    expect(latest.status, latest.text).toBe(200);
    expect(latest.body.data).toMatchObject({ status: 'completed', run_by: null, entity_id: null, total_discrepancies: 1 });
    expect(latest.body.data.discrepancies).toEqual([expect.objectContaining({ type: 'tb_balance_mismatch', account_code: 1100, currency: 'INR' })]);
    const d = latest.body.data.discrepancies![0];
    expect(d!.expected_amount - d!.found_amount).toBe(7);
  });
});

describe('ledger reports', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    ({ tenant } = await busyTenant());
  });

  it('lists the chart of accounts', async () => {
    const res = await tenant.http.GET('/v1/ledger/accounts');
    expect(res.body.data).toContainEqual({ code: 2400, name: 'Deferred revenue', type: 'liability', normal_balance: 'credit' });
  });

  it('balances the trial balance per entity × currency, and as of a date before anything is empty', async () => {
    for (const currency of ['INR', 'USD']) {
      const res = await tenant.http.GET('/v1/ledger/trial-balance', { query: { currency } });
      expect(res.status, res.text).toBe(200);
      const tb = res.body.data;
      expect(tb.accounts.length).toBeGreaterThan(1);
      expect(tb.total_debit).toBe(tb.total_credit);
      expect(tb.total_debit).toBeGreaterThan(0);
      expect(tb.accounts.reduce((a: number, r: { balance: number }) => a + r.balance, 0)).toBe(0);
    }
    const usdReceivable = (await tenant.http.GET('/v1/ledger/trial-balance', { query: { currency: 'USD' } })).body.data.accounts.find(
      (a: { code: number }) => a.code === 1100,
    );
    expect(usdReceivable!.debit).toBeLessThan(20_000); // never mixed with INR
    const early = await tenant.http.GET('/v1/ledger/trial-balance', { query: { as_of: '2020-01-01' } });
    expect(early.body.data).toMatchObject({ accounts: [], total_debit: 0, total_credit: 0, balanced: true });
  });

  it('refuses a malformed as_of, from or to with 400', async () => {
    for (const url of [
      '/v1/ledger/trial-balance?as_of=yesterday',
      '/v1/ledger/trial-balance?as_of=2026-02-30',
      '/v1/ledger/journal-entries?from=x',
      '/v1/ledger/export?to=2026-13-01',
      '/v1/finance/revenue?from=2026-05-01&to=2026-04-01',
    ]) {
      const res = await tenant.api('GET', url);
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('lists journal entries by date range and filters, and exports them as CSV', async () => {
    const day = t.clock.now().toISOString().slice(0, 10);
    const dayBefore = new Date(t.clock.now().getTime() - 86_400_000).toISOString().slice(0, 10);
    const all = await tenant.http.GET('/v1/ledger/journal-entries', { query: { from: day, to: day, limit: 2 } });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toHaveLength(2);
    expect(all.body.has_more).toBe(true);
    const none = await tenant.http.GET('/v1/ledger/journal-entries', { query: { to: dayBefore } });
    expect(none.body.total_count).toBe(0);
    const payments = await tenant.http.GET('/v1/ledger/journal-entries', { query: { kind: 'payment.recorded' } });
    expect(payments.body.total_count).toBe(2);
    const csv = await tenant.http.GET('/v1/ledger/export', { query: { from: day } });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const rows = csv.text.trim().split('\n');
    expect(rows[0]).toMatch(/^posted_at,entry_id,/);
    const lines = await db()
      .selectFrom('journal_lines')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenant.tenantId)
      .executeTakeFirstOrThrow();
    expect(rows.length - 1).toBe(Number(lines.n));
  });
});

describe('revenue recognition', () => {
  async function monthlySubscription(tenant: Tenant, amount: number) {
    const plan = await tenant.http.POST('/v1/plans', {
      body: {
        name: 'Monthly',
        code: `m-${Math.random().toString(36).slice(2)}`,
        interval_unit: 'month',
        amount,
        currency: 'INR',
      },
    });
    expect(plan.status, plan.text).toBe(201);
    const customer = await createCustomer(tenant);
    const sub = await tenant.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: plan.body.data.id } });
    expect(sub.status, sub.text).toBe(201);
    const invoices = (await tenant.http.GET('/v1/invoices', { query: { subscription_id: sub.body.data.id } })).body.data;
    return { sub: sub.body.data, invoice: invoices[0], customer };
  }

  async function revenue(tenant: Tenant) {
    const res = await tenant.http.GET('/v1/finance/revenue');
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  it('sums daily parts exactly to the whole for any period, amount and adjustment (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 100 }),
        (days, amount, adjustDay, cutPct) => {
          let s = { amount, total_days: days, base_recognized: 0, base_day: 0 };
          let prev = 0;
          let sum = 0;
          for (let d = 1; d <= days; d++) {
            if (d - 1 === Math.min(adjustDay, days)) {
              const cut = Math.floor(((s.amount - prev) * cutPct) / 100);
              s = { amount: s.amount - cut, total_days: days, base_recognized: prev, base_day: d - 1 };
            }
            const target = cumulativeTarget(s, d);
            expect(target).toBeGreaterThanOrEqual(prev);
            sum += target - prev;
            prev = target;
          }
          expect(sum).toBe(s.amount);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('defers a subscription invoice at finalization, recognizes it day by day, and keeps one-off invoices recognized at once', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const tenant = await t.registerTenant();
    const { invoice } = await monthlySubscription(tenant, 300_000);
    const oneOff = await createInvoice(tenant, await createCustomer(tenant), [50_000]);
    let r = await revenue(tenant);
    expect(r).toMatchObject({ currency: 'INR', deferred_total: 300_000, recognized_total: oneOff.subtotal });
    t.clock.set('2026-04-11T00:30:00Z');
    await t.kosh.worker.drain();
    r = await revenue(tenant);
    expect(r.deferred_total).toBe(200_000); // 10 of 30 days
    expect(r.recognized_total).toBe(100_000 + oneOff.subtotal);
    expect(r.months).toEqual([{ month: '2026-04', recognized: 100_000 + oneOff.subtotal }]);
    expect(invoice!.subtotal).toBe(300_000);
    const run = await reconcileTenant(t, tenant);
    expect(run.discrepancies).toEqual([]);
  });

  it('splits a refund of a service period by the days served (Ind AS 115): the served share off revenue, the rest off deferred revenue', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const tenant = await t.registerTenant();
    const { invoice, customer } = await monthlySubscription(tenant, 300_000);
    const paid = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: customer,
        invoice_id: invoice!.id,
        payment_type: 'bank_transfer',
        amount: invoice!.total,
      },
    });
    expect(paid.status, paid.text).toBe(201);
    // Day 10 of 30 has passed; the daily job has not run (the refund brings recognition up to date).
    t.clock.set('2026-04-11T00:30:00Z');
    const refund = await tenant.http.POST('/v1/payments/{id}/refunds', {
      path: { id: paid.body.data.id },
      body: { amount: Math.round(invoice!.total * 0.3), reason: 'Outage' },
    });
    expect(refund.status, refund.text).toBe(201);
    const note = (await tenant.http.GET('/v1/credit-notes/{id}', { path: { id: refund.body.data.credit_note_id! } })).body.data;
    const credited = note.subtotal; // the refund's revenue part
    const unserved = Math.round((credited * 20) / 30); // 20 of the 30 days are still to come
    let r = await revenue(tenant);
    expect(r.deferred_total).toBe(200_000 - unserved);
    expect(r.recognized_total).toBe(100_000 - (credited - unserved));
    expect((await reconcileTenant(t, tenant)).discrepancies).toEqual([]);
    // The rest of the period recognizes what is left, and the whole comes to the invoice net of the refund.
    t.clock.set('2026-05-02T00:30:00Z');
    await t.kosh.worker.drain();
    r = await revenue(tenant);
    // April's service is all recognized (the renewal's May period is deferred on its own).
    expect(r.months[0]).toEqual({ month: '2026-04', recognized: 300_000 - credited });
  });

  it('splits an ordinary credit note on a subscription invoice the same way', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const tenant = await t.registerTenant();
    const { invoice, customer } = await monthlySubscription(tenant, 300_000);
    t.clock.set('2026-04-16T00:30:00Z');
    await t.kosh.worker.drain(); // 15 of 30 days recognized
    const note = await tenant.http.POST('/v1/credit-notes', {
      body: { customer_id: customer, invoice_id: invoice!.id, amount: Math.round(invoice!.total / 10) },
    });
    expect(note.status, note.text).toBe(201);
    const credited = note.body.data.subtotal;
    const r = await revenue(tenant);
    expect(r.deferred_total).toBe(150_000 - Math.round(credited / 2));
    expect(r.recognized_total).toBe(150_000 - (credited - Math.round(credited / 2)));
    expect((await reconcileTenant(t, tenant)).discrepancies).toEqual([]);
  });

  it('keeps recognized + deferred = net invoiced to the paisa over random periods, credit notes and cancellations (property)', async () => {
    /** Σ subtotals of finalized, unvoided invoices − Σ revenue parts of issued credit notes. */
    async function netInvoiced(tenant: Tenant): Promise<number> {
      const invoices = (await tenant.http.GET('/v1/invoices', { query: { limit: 1000 } })).body.data;
      const notes = (await tenant.http.GET('/v1/credit-notes', { query: { limit: 1000 } })).body.data;
      const invoiced = invoices
        .filter((i: { status: string }) => i.status !== 'draft' && i.status !== 'void')
        .reduce((a: number, i: { subtotal: number }) => a + i.subtotal, 0);
      const credited = notes
        .filter((n: { status: string }) => ['issued', 'used', 'expired'].includes(n.status))
        .reduce(
          (a: number, n: { subtotal: number; tax_amount: number; amount: number }) => a + (n.subtotal > 0 || n.tax_amount > 0 ? n.subtotal : n.amount),
          0,
        );
      return invoiced - credited;
    }
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 9_999_999 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 4 }),
        fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
        fc.constantFrom('none', 'now', 'now_prorated'),
        async (amount, steps, creditPct, cancel) => {
          t.clock.set('2026-06-01T00:00:00Z');
          const tenant = await t.registerTenant();
          const { sub, invoice, customer } = await monthlySubscription(tenant, amount);
          for (const [i, days] of steps.entries()) {
            t.clock.advance(days * 86_400_000 + 3_600_000);
            await t.kosh.worker.drain();
            if (i === 0 && creditPct !== undefined) {
              const noteAmount = Math.max(1, Math.floor((invoice!.total * creditPct) / 100));
              await tenant.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoice!.id, amount: noteAmount } });
            }
            const r = await revenue(tenant);
            expect(r.recognized_total + r.deferred_total).toBe(await netInvoiced(tenant));
          }
          if (cancel !== 'none') {
            let res = await tenant.http.POST('/v1/subscriptions/{id}/cancel', {
              path: { id: sub.id },
              body: { at_period_end: false, prorate: cancel === 'now_prorated' },
            });
            // Nothing left to credit (an earlier note took the whole invoice): cancel without proration.
            if (res.status === 409 && res.error!.reason === 'amount_exceeds_invoice')
              res = await tenant.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
            expect(res.status, res.text).toBe(200);
            const r = await revenue(tenant);
            expect(r.deferred_total).toBe(0);
            expect(r.recognized_total).toBe(await netInvoiced(tenant));
          }
          expect((await reconcileTenant(t, tenant)).discrepancies).toEqual([]);
        },
      ),
      { numRuns: 6 },
    );
  });
});
