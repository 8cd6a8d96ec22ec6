/**
 * npm run bench:analytics — revenue analytics over a large tenant.
 *
 * Seeds one tenant with N active subscriptions (default 200 000, bulk SQL) and 18 months of MRR
 * history as the snapshot job would have left it: a `new` movement per subscription spread over
 * the 540 days, an expansion for every 10th, a churn for every 12th (canceled in the subscriptions
 * table too), and one day total per day. Then measures, on the warm database:
 *   mrr_ms        GET /v1/analytics/mrr over the last 12 months (the service call; median of 9)
 *   waterfall_ms  the 12-month waterfall (median of 9)
 *   snapshot_per_s  today's snapshot of every subscription (what the nightly job runs)
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else PGlite.
 * Prints the figures, then LAST one JSON line: {"mrr_ms","waterfall_ms","snapshot_per_s","subscriptions","peak_rss_mb"}
 *   --n 200000   subscriptions
 */
import { sql } from 'kysely';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { getMrr, getWaterfall, snapshotAllTenants } from '../src/modules/analytics/analytics.service.js';
import { loadConfig } from '../src/platform/config.js';
import { openTestDatabase } from '../test/support/database.js';
import { seedDueSubscriptions } from '../test/subscriptions/seed.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 200_000);
const HISTORY_START = '2025-05-01';
const DAYS = 540;
const NOW = new Date('2026-10-23T06:00:00Z'); // the day after the seeded history
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

async function median(fn: () => Promise<unknown>, runs = 9): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)]!;
}

async function main() {
  const database = await openTestDatabase();
  const kosh = await createKosh({ config: loadConfig({ LOG_LEVEL: 'silent', KOSH_DB_POOL_SIZE: '4' }), database, logger: pino({ level: 'silent' }) });
  const db = database.db;
  try {
    const seedStarted = performance.now();
    const anchor = new Date(`${HISTORY_START}T00:00:00Z`);
    const { tenantId } = await seedDueSubscriptions(db, { n: N, anchor, due: new Date('2026-11-01T00:00:00Z'), customers: N });
    // 18 months of history: one new per subscription, every 10th expands ×2 after 30 days, every
    // 12th churns after 60 days (when that is still inside the history).
    await sql`
      CREATE TEMP TABLE seeded AS
      SELECT s.id, s.customer_id, 49900 * s.quantity AS mrr, row_number() OVER (ORDER BY s.id) AS i
      FROM subscriptions s WHERE s.tenant_id = ${tenantId}`.execute(db);
    await sql`
      INSERT INTO mrr_movements (tenant_id, subscription_id, customer_id, currency, effective_date, kind, previous_mrr, mrr, created_at)
      SELECT ${tenantId}::uuid, id, customer_id, 'INR', ${HISTORY_START}::date + (i % ${DAYS - 61}::int)::int, 'new', 0, mrr, now() FROM seeded
      UNION ALL
      SELECT ${tenantId}::uuid, id, customer_id, 'INR', ${HISTORY_START}::date + (i % ${DAYS - 61}::int)::int + 30, 'expansion', mrr, 2 * mrr, now() FROM seeded WHERE i % 10 = 0
      UNION ALL
      SELECT ${tenantId}::uuid, id, customer_id, 'INR', ${HISTORY_START}::date + (i % ${DAYS - 61}::int)::int + 60, 'churned', CASE WHEN i % 10 = 0 THEN 2 * mrr ELSE mrr END, 0, now() FROM seeded WHERE i % 12 = 0`.execute(
      db,
    );
    await sql`
      UPDATE subscriptions s SET status = 'canceled', canceled_at = ${NOW}, ended_at = ${NOW}
      FROM seeded WHERE s.tenant_id = ${tenantId} AND s.id = seeded.id AND seeded.i % 12 = 0`.execute(db);
    await sql`UPDATE subscriptions s SET quantity = 2 * s.quantity FROM seeded WHERE s.tenant_id = ${tenantId} AND s.id = seeded.id AND seeded.i % 10 = 0 AND seeded.i % 12 <> 0`.execute(
      db,
    );
    await sql`
      INSERT INTO mrr_current (tenant_id, subscription_id, customer_id, currency, mrr, ever_positive, as_of, prior_mrr, prior_ever_positive)
      SELECT DISTINCT ON (subscription_id) ${tenantId}::uuid, subscription_id, customer_id, 'INR', mrr, true, effective_date, previous_mrr, previous_mrr > 0 OR kind <> 'new'
      FROM mrr_movements WHERE tenant_id = ${tenantId} ORDER BY subscription_id, effective_date DESC`.execute(db);
    await sql`
      INSERT INTO mrr_daily (tenant_id, snapshot_date, currency, mrr, subscriptions, customers, taken_at)
      SELECT ${tenantId}::uuid, d::date, 'INR',
        sum(coalesce(delta, 0)) OVER (ORDER BY d), sum(coalesce(moves, 0)) OVER (ORDER BY d), sum(coalesce(moves, 0)) OVER (ORDER BY d), now()
      FROM generate_series(${HISTORY_START}::date, ${HISTORY_START}::date + ${DAYS - 1}::int, interval '1 day') AS d
      LEFT JOIN (
        SELECT effective_date, sum(mrr - previous_mrr) AS delta,
          sum(CASE WHEN kind = 'new' THEN 1 WHEN kind = 'churned' THEN -1 ELSE 0 END) AS moves
        FROM mrr_movements WHERE tenant_id = ${tenantId} GROUP BY effective_date
      ) m ON m.effective_date = d::date`.execute(db);
    await sql`VACUUM ANALYZE mrr_movements`.execute(db);
    await sql`ANALYZE subscriptions, prices, mrr_current, mrr_daily`.execute(db);
    const counts = await sql<{ movements: number; days: number }>`
      SELECT (SELECT count(*)::int FROM mrr_movements WHERE tenant_id = ${tenantId}) AS movements,
             (SELECT count(*)::int FROM mrr_daily WHERE tenant_id = ${tenantId}) AS days`.execute(db);
    console.log(
      `seeded ${N} subscriptions, ${counts.rows[0]!.movements} movements, ${counts.rows[0]!.days} daily totals in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (${database.kind})`,
    );

    const ctx = { tx: db, tenantId, now: NOW };
    const mrrMs = await median(() => getMrr(ctx, { from: '2025-11', to: '2026-10' }));
    const waterfallMs = await median(() => getWaterfall(ctx, { from: '2025-11', to: '2026-10' }));
    const waterfall = await getWaterfall(ctx, { from: '2025-11', to: '2026-10' });
    const mrr = await getMrr(ctx, { from: '2025-11', to: '2026-10' });
    console.log(`MRR series (12 months): median ${mrrMs.toFixed(1)} ms; last month ${mrr.months.at(-1)!.mrr}`);
    console.log(`waterfall (12 months): median ${waterfallMs.toFixed(1)} ms; ending ${waterfall.months.at(-1)!.ending_mrr}`);
    if (waterfall.months.at(-1)!.ending_mrr !== mrr.months.at(-1)!.mrr) throw new Error('waterfall ending MRR differs from the day total');

    const snapStarted = performance.now();
    const snap = await snapshotAllTenants(db, null, NOW);
    const snapSeconds = (performance.now() - snapStarted) / 1000;
    console.log(`snapshot of ${snap.subscriptions} subscriptions: ${snapSeconds.toFixed(2)} s, ${snap.movements} movements`);

    const result = {
      mrr_ms: Math.round(mrrMs * 10) / 10,
      waterfall_ms: Math.round(waterfallMs * 10) / 10,
      snapshot_per_s: Math.round(snap.subscriptions / snapSeconds),
      subscriptions: snap.subscriptions,
      peak_rss_mb: Math.round(peakRss / 1048576),
    };
    console.log(JSON.stringify(result));
  } finally {
    clearInterval(sampler);
    await kosh.close();
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
