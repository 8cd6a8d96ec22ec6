import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, gstinFor } from '../../../test/support/billing.js';
import { onPostgresServer } from '../../../test/support/database.js';

let t: TestKosh;
let acme: Tenant;
let customer: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  customer = await createCustomer(acme);
});
afterAll(() => t.close());

async function counts(tenantId: string) {
  const row = await sql<{ invoices: number; lines: number; entries: number; events: number; counter: number | null }>`
    SELECT (SELECT count(*) FROM invoices WHERE tenant_id = ${tenantId})::int AS invoices,
           (SELECT count(*) FROM journal_lines WHERE tenant_id = ${tenantId})::int AS lines,
           (SELECT count(*) FROM journal_entries WHERE tenant_id = ${tenantId})::int AS entries,
           (SELECT count(*) FROM events WHERE tenant_id = ${tenantId} AND type LIKE 'invoice.%')::int AS events,
           (SELECT max(last_value) FROM document_counters WHERE tenant_id = ${tenantId} AND kind = 'invoice')::int AS counter`.execute(t.database.db);
  return row.rows[0]!;
}

describe('invoices: all or nothing', () => {
  it('leaves no record, ledger line, number or event when the action fails after its writes, at commit', async () => {
    await acme.http.POST('/v1/invoices', { body: { customer_id: customer, currency: 'INR', lines: [{ description: 'ok', unit_amount: 100 }] } });
    const before = await counts(acme.tenantId);
    expect(before.counter).toBe(1);

    // A deferred trigger fails the transaction at COMMIT — after every business write of the
    // action (invoice, lines, number, journal entry, events) has been made.
    await sql`CREATE FUNCTION test_fail_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
              BEGIN RAISE EXCEPTION 'injected failure at commit'; END $$`.execute(t.database.db);
    await sql`CREATE CONSTRAINT TRIGGER test_fail_at_commit AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
              FOR EACH ROW WHEN (NEW.type = 'invoice.finalized') EXECUTE FUNCTION test_fail_at_commit()`.execute(t.database.db);
    try {
      const res = await acme.http.POST('/v1/invoices', {
        body: { customer_id: customer, currency: 'INR', lines: [{ description: 'doomed', unit_amount: 5_000 }] },
      });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { request_id: expect.any(String), code: 'internal_error', message: 'internal error' } });
    } finally {
      await sql`DROP TRIGGER test_fail_at_commit ON events`.execute(t.database.db);
      await sql`DROP FUNCTION test_fail_at_commit()`.execute(t.database.db);
    }
    expect(await counts(acme.tenantId)).toEqual(before);

    // The number that failed is not lost: the next invoice takes it.
    const next = await acme.http.POST('/v1/invoices', { body: { customer_id: customer, currency: 'INR', lines: [{ description: 'ok', unit_amount: 100 }] } });
    expect(next.body.data.number).toBe('INV-000002');
  });

  it.runIf(onPostgresServer)('gives 100 concurrent finalizations on one entity 100 distinct, contiguous numbers', async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29'), invoice_prefix: 'RACE-' });
    const buyer = await createCustomer(tenant);
    const drafts: string[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: buyer,
          currency: 'INR',
          auto_finalize: false,
          lines: [{ description: `d${i}`, unit_amount: 100 + i }],
        },
      });
      drafts.push(res.body.data.id);
    }
    const results = await Promise.all(drafts.map((id) => tenant.http.POST('/v1/invoices/{id}/finalize', { path: { id } })));
    expect(results.map((r) => r.status)).toEqual(drafts.map(() => 200));
    const numbers = results.map((r) => Number(r.body.data.number!.slice('RACE-'.length))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });
});
