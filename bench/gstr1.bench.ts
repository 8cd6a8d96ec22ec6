/**
 * npm run bench:gstr1 — a month of invoices (200 000 by default) inserted with set-based SQL
 * (not the API), then GSTR-1 built for it through the service the route uses (set-based: one SQL
 * aggregation per section, B2CS and doc_issue summed in SQL) and serialized. Checks that the sections' taxable value
 * equals the month's, so a fast wrong answer cannot pass. PostgreSQL when DATABASE_URL is set (a
 * fresh database, dropped afterwards). Last line: one JSON object. Targets: ≥ 50 000 invoices/s
 * into the return, peak RSS ≤ 300 MB.
 *   --invoices 20000   a smaller month
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { registerTenant } from '../src/flows/tenants/register-tenant.js';
import { buildGstr1 } from '../src/modules/gst-returns/index.js';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';
import { openTestDatabase } from '../test/support/database.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const INVOICES = arg('invoices', 200_000);
const CUSTOMERS = 2_000;
const gstin = (first14: string) => first14 + gstinCheckCharacter(first14);

async function main() {
  const database = await openTestDatabase();
  if (database.kind !== 'postgres') console.warn('bench:gstr1 is meant for PostgreSQL (set DATABASE_URL)');
  try {
    const db = database.db;
    const { tenant } = await registerTenant(
      db,
      new Date('2026-05-10T00:00:00Z'),
      {
        name: 'Bench',
        email: 'bench@kosh.test',
        base_currency: 'INR',
        data_region: 'in',
        country_code: 'IN',
        state_code: '29',
        gstin: gstin('29AAECK4321L1Z'),
        invoice_prefix: 'B-',
      } as never,
      'test',
    );
    const entity = await db.selectFrom('legal_entities').select(['id', 'gstin']).where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow();
    let started = performance.now();
    // Customers: a quarter registered in Karnataka (intra-state B2B), a quarter in Maharashtra
    // (inter-state B2B), the rest unregistered in either state.
    const gstins = Array.from({ length: CUSTOMERS / 2 }, (_, i) =>
      gstin(
        `${i % 2 ? '27' : '29'}AABC${String(i)
          .padStart(4, '0')
          .replace(/\d/g, (d) => 'ABCDEFGHIJ'[Number(d)]!)}1Z`.slice(0, 14),
      ),
    );
    await sql`
      INSERT INTO customers (tenant_id, id, email, name, gstin, billing_address, created_at, updated_at)
      SELECT ${tenant.id}::uuid, gen_random_uuid(), 'c' || g || '@bench.test', 'Customer ' || g,
             CASE WHEN g <= ${CUSTOMERS / 2} THEN (${JSON.stringify(gstins)}::jsonb ->> (g - 1)) END,
             jsonb_build_object('state_code', CASE WHEN g % 2 = 0 THEN '29' ELSE '27' END),
             now(), now()
      FROM generate_series(1, ${CUSTOMERS}) g`.execute(db);
    // Invoices of April 2026 (India), spread over the month; one 18% line each, every tenth a
    // second line. Amounts vary; B2C inter-state ones reach past ₹1 lakh now and then (B2CL).
    await sql`
      WITH c AS (SELECT id, gstin, billing_address->>'state_code' AS state, row_number() OVER (ORDER BY email) AS n FROM customers WHERE tenant_id = ${tenant.id}),
      g AS (SELECT g, 1000 + (g * 7919) % 150000 * 100 AS base FROM generate_series(1, ${INVOICES}) g),
      inv AS (
        SELECT g.g, gen_random_uuid() AS id, c.id AS customer_id, c.gstin, coalesce(substr(c.gstin, 1, 2), c.state) AS pos,
               (CASE WHEN g.g % 10 = 0 THEN 2 ELSE 1 END) * g.base AS subtotal
        FROM g JOIN c ON c.n = 1 + g.g % ${CUSTOMERS}
      )
      INSERT INTO invoices (tenant_id, id, entity_id, customer_id, number, status, currency, subtotal, tax_amount, cgst_amount, sgst_amount,
                            igst_amount, tax_type, place_of_supply, total, amount_due, issued_at, customer_details, created_at, updated_at)
      SELECT ${tenant.id}::uuid, id, ${entity.id}::uuid, customer_id, 'B-' || lpad(g::text, 7, '0'),
             CASE WHEN g % 500 = 0 THEN 'void' ELSE 'open' END, 'INR', subtotal,
             subtotal * 18 / 100,
             CASE WHEN pos = '29' THEN subtotal * 9 / 100 ELSE 0 END, CASE WHEN pos = '29' THEN subtotal * 9 / 100 ELSE 0 END,
             CASE WHEN pos = '29' THEN 0 ELSE subtotal * 18 / 100 END,
             CASE WHEN pos = '29' THEN 'intra_state' ELSE 'inter_state' END, pos,
             subtotal + subtotal * 18 / 100, subtotal + subtotal * 18 / 100,
             timestamptz '2026-03-31 18:30:00+00' + (g::float8 / ${INVOICES} * 29.99 * interval '1 day'),
             jsonb_build_object('name', 'Customer', 'gstin', gstin, 'state_code', pos),
             now(), now()
      FROM inv`.execute(db);
    await sql`
      INSERT INTO invoice_lines (tenant_id, id, invoice_id, position, description, quantity, unit_amount, amount, hsn_code, rate_bp,
                                 cgst_amount, sgst_amount, igst_amount, tax_amount, total)
      SELECT i.tenant_id, gen_random_uuid(), i.id, p, 'Subscription', 1, i.subtotal / lines, i.subtotal / lines, '998314', 1800,
             i.cgst_amount / lines, i.sgst_amount / lines, i.igst_amount / lines, i.tax_amount / lines, i.total / lines
      FROM (SELECT *, CASE WHEN subtotal % 2 = 0 AND number::text ~ '0$' THEN 2 ELSE 1 END AS lines FROM invoices WHERE tenant_id = ${tenant.id}) i
      CROSS JOIN LATERAL generate_series(1, i.lines) p`.execute(db);
    await sql`ANALYZE invoices`.execute(db);
    await sql`ANALYZE invoice_lines`.execute(db);
    console.log(
      `inserted ${INVOICES} invoices in ${((performance.now() - started) / 1000).toFixed(1)} s (${database.kind}); load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );

    started = performance.now();
    const result = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (tx) => {
        const built = await buildGstr1({ tx, tenantId: tenant.id, now: new Date('2026-05-10T00:00:00Z') }, entity.id, '042026');
        const text = JSON.stringify(built.builder.toJson(built.entity.gstin, '042026', built.hsn, built.hsnCredits));
        return { built, bytes: text.length };
      });
    const seconds = (performance.now() - started) / 1000;
    const expected = await sql<{ txval: number; n: number }>`
      SELECT sum(l.amount)::bigint AS txval, count(DISTINCT i.id)::bigint AS n FROM invoices i JOIN invoice_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id
      WHERE i.tenant_id = ${tenant.id} AND i.status <> 'void'`.execute(db);
    const totals = result.built.builder.totals;
    const sections = totals.b2b.txval + totals.b2cl.txval + totals.b2cs.txval + totals.exp.txval;
    if (sections !== expected.rows[0]!.txval || result.built.builder.invoices !== expected.rows[0]!.n) {
      throw new Error(
        `GSTR-1 totals differ: sections ${sections} vs ${expected.rows[0]!.txval}; invoices ${result.built.builder.invoices} vs ${expected.rows[0]!.n}`,
      );
    }
    console.log(`sections: b2b ${totals.b2b.count}, b2cl ${totals.b2cl.count}, b2cs ${totals.b2cs.count}; JSON ${(result.bytes / 1e6).toFixed(1)} MB`);
    console.log(
      JSON.stringify({
        invoices_per_s: Math.round(INVOICES / seconds),
        seconds: Number(seconds.toFixed(2)),
        peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      }),
    );
  } finally {
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
