/**
 * npm run bench:dunning — the dunning step runner over N active executions with a step due.
 *
 * Seeds one tenant whose default campaign e-mails at once and again after 3 days, N customers, N
 * overdue open invoices and N active executions whose first step is due (bulk SQL). Then runs the
 * step runner (what the `dunning.run_steps` job runs) and measures steps per second: each step
 * records the action, adds its e-mail to the batch's one dunning.send_email job (the pay links, the
 * rendering and the outbox mails happen there, after commit — docs/decisions/0185, 0189) and moves
 * the execution to its next step, in batches of 100 per transaction. With --deliver, the worker
 * then runs the e-mail jobs (checkout sessions, Handlebars, outbox, set-based per batch) and sends
 * the mails to a local SMTP sink; the step-to-outbox rate (with the CPU per e-mail of Node and of
 * the database's PostgreSQL backends) and the delivery rate are printed.
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else PGlite.
 * LAST line: {"steps_per_s","executions","peak_rss_mb"}
 *   --n 50000   executions
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../src/platform/db/schema.js';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { runDueDunningSteps } from '../src/flows/dunning/run-dunning.js';
import { registerTenant } from '../src/flows/tenants/register-tenant.js';
import { createSecretBox } from '../src/platform/secrets/secrets.js';
import { loadConfig } from '../src/platform/config.js';
import { systemClock } from '../src/platform/clock.js';
import { openTestDatabase } from '../test/support/database.js';
import { startMailSink } from '../test/support/mail-sink.js';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 50_000);
const DELIVER = process.argv.includes('--deliver');
const NOW = new Date('2026-05-01T10:00:00Z');
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

async function main() {
  const sink = await startMailSink();
  const database = await openTestDatabase();
  const config = loadConfig({ LOG_LEVEL: 'silent', SMTP_URL: sink.url, KOSH_DB_POOL_SIZE: '4' });
  const kosh = await createKosh({ config, database, logger: pino({ level: 'silent' }) });
  const db = database.db;
  try {
    const seedStarted = performance.now();
    const { tenant } = await registerTenant(
      db,
      NOW,
      {
        name: 'Dunning bench',
        email: 'bench@dunning.test',
        base_currency: 'INR',
        data_region: 'in',
        country_code: 'IN',
        state_code: '29',
        invoice_prefix: 'DUN-',
      } as never,
      'test',
    );
    const tenantId = tenant.id;
    const { rows: campaign } = await sql<{ id: string }>`SELECT id FROM dunning_campaigns WHERE tenant_id = ${tenantId} AND is_default`.execute(db);
    const campaignId = campaign[0]!.id;
    await sql`DELETE FROM dunning_steps WHERE tenant_id = ${tenantId} AND campaign_id = ${campaignId}`.execute(db);
    await sql`
      INSERT INTO dunning_steps (tenant_id, id, campaign_id, step_order, delay_hours, channel, template_name, created_at, updated_at)
      VALUES (${tenantId}, gen_random_uuid(), ${campaignId}, 1, 0, 'email', 'dunning_reminder', ${NOW}, ${NOW}),
             (${tenantId}, gen_random_uuid(), ${campaignId}, 2, 72, 'email', 'dunning_final_notice', ${NOW}, ${NOW})`.execute(db);
    await sql`
      INSERT INTO customers (tenant_id, id, email, name, billing_address, created_at, updated_at)
      SELECT ${tenantId}::uuid, gen_random_uuid(), 'c' || i || '@bench.test', 'Customer ' || i, jsonb_build_object('state_code', '29', 'country', 'IN'), ${NOW}, ${NOW}
      FROM generate_series(1, ${N}::int) AS i`.execute(db);
    await sql`
      INSERT INTO invoices (tenant_id, id, entity_id, customer_id, number, status, currency, subtotal, tax_amount, cgst_amount, sgst_amount, igst_amount,
                            tax_type, total, amount_due, issued_at, due_date, created_at, updated_at)
      SELECT ${tenantId}::uuid, gen_random_uuid(), e.id, c.id, 'DUN-' || lpad(row_number() OVER ()::text, 7, '0'), 'open', 'INR', 100000, 18000, 9000, 9000, 0,
             'intra_state', 118000, 118000, ${NOW}::timestamptz - interval '40 days', ${NOW}::timestamptz - interval '10 days', ${NOW}, ${NOW}
      FROM customers c CROSS JOIN (SELECT id FROM legal_entities WHERE tenant_id = ${tenantId} AND is_primary) e
      WHERE c.tenant_id = ${tenantId}`.execute(db);
    await sql`
      INSERT INTO dunning_executions (tenant_id, id, campaign_id, invoice_id, customer_id, trigger_event, status, steps_done, next_step_at,
                                      payment_wall_active, started_at, created_at, updated_at)
      SELECT tenant_id, gen_random_uuid(), ${campaignId}, id, customer_id, 'invoice_overdue', 'active', 0, ${NOW}::timestamptz - interval '1 minute',
             false, ${NOW}::timestamptz - interval '1 minute', ${NOW}, ${NOW}
      FROM invoices WHERE tenant_id = ${tenantId}`.execute(db);
    await sql`ANALYZE customers, invoices, dunning_executions, dunning_steps, dunning_campaigns, dunning_actions, jobs`.execute(db);
    console.log(`seeded ${N} overdue invoices with due dunning steps in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (${database.kind})`);

    const env = { db, clock: { now: () => NOW }, config, logger: pino({ level: 'silent' }), secrets: createSecretBox(randomBytes(32)) };
    const started = performance.now();
    const steps = await runDueDunningSteps(env);
    const seconds = (performance.now() - started) / 1000;
    const { rows: check } = await sql<{ actions: number; mails: number; jobs: number; advanced: number }>`
      SELECT (SELECT count(*)::int FROM dunning_actions WHERE tenant_id = ${tenantId} AND outcome = 'succeeded') AS actions,
             (SELECT coalesce(sum(CASE WHEN payload ? 'emails' THEN jsonb_array_length(payload->'emails') ELSE 1 END), 0)::int
                FROM jobs WHERE kind = 'dunning.send_email') AS mails,
             (SELECT count(*)::int FROM jobs WHERE kind = 'dunning.send_email') AS jobs,
             (SELECT count(*)::int FROM dunning_executions WHERE tenant_id = ${tenantId} AND steps_done = 1 AND status = 'active') AS advanced`.execute(db);
    console.log(
      `step runner: ${steps} steps in ${seconds.toFixed(2)} s; ${check[0]!.actions} e-mail actions, ${check[0]!.mails} e-mails queued in ${check[0]!.jobs} jobs, ${check[0]!.advanced} executions at step 2`,
    );
    if (check[0]!.actions !== N || check[0]!.mails !== N || check[0]!.advanced !== N) throw new Error('not every execution ran its step exactly once');

    if (DELIVER) {
      const sendStarted = performance.now();
      const cpuStarted = process.cpuUsage();
      const pgCpuStarted = await backendCpuSeconds(db);
      kosh.worker.start();
      // Step → outbox: when every e-mail of the run is a mail.send row (docs/decisions/0189).
      let outboxSeconds = 0;
      let outboxCpu = 0;
      let outboxPgCpu = 0;
      while (performance.now() - sendStarted < 600_000) {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE kind = 'mail.send'`.execute(db);
        if (rows[0]!.n >= N) {
          outboxSeconds = (performance.now() - sendStarted) / 1000;
          const cpu = process.cpuUsage(cpuStarted);
          outboxCpu = (cpu.user + cpu.system) / 1e6;
          outboxPgCpu = (await backendCpuSeconds(db)) - pgCpuStarted;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      if (outboxSeconds > 0) {
        console.log(
          `outbox: ${N} e-mails from step to outbox in ${outboxSeconds.toFixed(2)} s (${Math.round(N / outboxSeconds)}/s); ` +
            `CPU per e-mail ${((outboxCpu * 1e3) / N).toFixed(2)} ms Node + ${((outboxPgCpu * 1e3) / N).toFixed(2)} ms PostgreSQL`,
        );
      }
      while (sink.messages.length < N && performance.now() - sendStarted < 600_000) await new Promise((r) => setTimeout(r, 200));
      await kosh.worker.stop();
      const sendSeconds = (performance.now() - sendStarted) / 1000;
      if (sink.messages.length < N) {
        const { rows } = await sql<{ kind: string; state: string; last_error: string | null; n: number }>`
          SELECT kind, state, max(last_error) AS last_error, count(*)::int AS n FROM jobs GROUP BY kind, state ORDER BY kind, state`.execute(db);
        console.log('undelivered; jobs:', rows);
      }
      console.log(
        `delivered ${sink.messages.length} e-mails to the local SMTP sink in ${sendSeconds.toFixed(1)} s (${Math.round(sink.messages.length / sendSeconds)}/s)`,
      );
    }
    void systemClock;
    console.log(JSON.stringify({ steps_per_s: Math.round(steps / seconds), executions: N, peak_rss_mb: Math.round(peakRss / 1048576) }));
  } finally {
    clearInterval(sampler);
    await kosh.close();
    await database.close();
    await sink.close();
  }
}

/** CPU seconds of this database's server processes (PostgreSQL on this machine; 0 for PGlite, which runs in this process). */
async function backendCpuSeconds(db: Kysely<DB>): Promise<number> {
  if (!process.env.DATABASE_URL) return 0;
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db);
  let ticks = 0;
  for (const { pid } of rows) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }
  return ticks / 100;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
