/**
 * npm run bench:dunning — dunning steps end to end: from due executions to e-mails accepted by an
 * SMTP server.
 *
 * Seeds one tenant whose default campaign e-mails at once and again after 3 days, N customers, N
 * overdue open invoices and N active executions whose first step is due (bulk SQL). Then, with
 * the app's worker running (as `kosh serve` runs it), runs the step runner (what the
 * `dunning.run_steps` job runs): each step records the action, adds its e-mail to the batch's one
 * e-mail job and moves the execution to its next step, in batches of 100 per transaction; the
 * worker runs the e-mail jobs (`dunning.send_email`: the checkout sessions behind the pay links,
 * Handlebars, the outbox mails, set-based per batch — docs/decisions/0185, 0189) and drains the
 * outbox over pooled SMTP connections to a local SMTP sink. The clock is frozen at the seeding
 * instant, so no second step falls due.
 *
 * The SMTP sink (the `smtp-server` package, as in the tests) runs in a CHILD PROCESS: it only
 * counts the messages it accepts (and Message-IDs seen twice), so neither its CPU nor its memory
 * is Kosh's. Peak RSS is this process's (Kosh: app, worker, step runner), sampled every 50 ms.
 *
 * `steps_per_s` = N / seconds from the start of the step runner until the sink has accepted the
 * N-th e-mail. Info lines give the step runner alone, the delivery rate, and CPU (this process's
 * user+system, and the sink's) per e-mail — less sensitive than rates to a busy machine.
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else PGlite.
 * LAST line: {"steps_per_s","executions","peak_rss_mb","delivered","duplicates"}
 *   --n 50000          executions
 *   --steps-only       the step runner alone, nothing delivered (the figure before issue #15)
 *   --timeout 300      seconds to wait for the sink before giving up (steps_per_s then counts
 *                      only the delivered e-mails)
 */
import { sql } from 'kysely';
import { pino } from 'pino';
import { AppScope } from '../src/platform/app-scope.js';
import { createKosh } from '../src/app.js';
import { runDueDunningSteps } from '../src/flows/dunning/run-dunning.js';
import { DUNNING_OVERDUE_SCAN_JOB, DUNNING_STEPS_JOB } from '../src/flows/dunning/dunning.wiring.js';
import { registerTenant } from '../src/flows/tenants/register-tenant.js';
import { createSecretBox } from '../src/platform/secrets/secrets.js';
import { loadConfig } from '../src/platform/config.js';
import { openTestDatabase } from '../test/support/database.js';
import { randomBytes } from 'node:crypto';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 50_000);
const STEPS_ONLY = process.argv.includes('--steps-only');
const TIMEOUT_S = arg('timeout', 300);
const NOW = new Date('2026-05-01T10:00:00Z');
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

type FromSink = { url: string } | { accepted: number; duplicates: number; cpuMs: number };

/** The child process: an SMTP server that accepts everything and counts it. */
async function runSink(): Promise<void> {
  const seen = new Set<string>();
  let accepted = 0;
  let duplicates = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      let head = '';
      stream.on('data', (chunk: Buffer) => {
        if (head.length < 4096) head += chunk.toString('latin1');
      });
      stream.on('error', callback);
      stream.on('end', () => {
        const id = /^message-id:\s*(\S+)/im.exec(head)?.[1] ?? `none-${accepted}`;
        if (seen.has(id)) duplicates += 1;
        else seen.add(id);
        accepted += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const report = () => {
    const cpu = process.cpuUsage();
    process.send!({ accepted, duplicates, cpuMs: (cpu.user + cpu.system) / 1000 } satisfies FromSink);
  };
  let last = -1;
  setInterval(() => {
    if (accepted !== last) report();
    last = accepted;
  }, 20).unref();
  process.on('message', report);
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}` } satisfies FromSink);
}

async function main() {
  const child = fork(fileURLToPath(import.meta.url), ['--sink'], { execArgv: process.execArgv });
  let sink = { accepted: 0, duplicates: 0, cpuMs: 0 };
  const sinkUrl = await new Promise<string>((resolve) =>
    child.on('message', (m: FromSink) => {
      if ('url' in m) resolve(m.url);
      else sink = m;
    }),
  );
  const database = await openTestDatabase();
  const config = loadConfig({ LOG_LEVEL: 'silent', SMTP_URL: sinkUrl, KOSH_DB_POOL_SIZE: '4' });
  // The app's clock is the bench's frozen one: the worker's recurring dunning sweep then finds no
  // second step due, and the mail jobs (queued at NOW) are due for it.
  const kosh = await createKosh({ config, database, clock: { now: () => NOW }, logger: pino({ level: 'silent' }) });
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
    // Not `jobs`: statistics of the still empty queue made PostgreSQL plan the worker's claim as a
    // bitmap scan over every queued mail (~70 ms a claim at 30 000) until autovacuum re-analysed it.
    await sql`ANALYZE customers, invoices, dunning_executions, dunning_steps, dunning_campaigns, dunning_actions`.execute(db);
    console.log(`seeded ${N} overdue invoices with due dunning steps in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (${database.kind})`);

    const env = { db, clock: { now: () => NOW }, config, logger: pino({ level: 'silent' }), secrets: createSecretBox(randomBytes(32)), scope: new AppScope() };
    const commits = async () =>
      Number((await sql<{ n: string }>`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()`.execute(db)).rows[0]?.n ?? 0);
    const commitsBefore = database.kind === 'postgres' ? await commits() : 0;
    const cpuBefore = process.cpuUsage();
    const sinkCpuBefore = sink.cpuMs;
    const started = performance.now();
    let steps: number;
    if (STEPS_ONLY) steps = await runDueDunningSteps(env);
    else {
      // The worker runs the steps as in production: its recurring `dunning.run_steps` job is due at
      // once. The step phase ends when that job has finished and no other is left to run steps.
      kosh.worker.start();
      for (;;) {
        await new Promise((r) => setTimeout(r, 50));
        const { rows } = await sql<{ finished: number; open: number }>`
          SELECT count(*) FILTER (WHERE state = 'done')::int AS finished, count(*) FILTER (WHERE state IN ('pending', 'running'))::int AS open
          FROM jobs WHERE kind IN (${DUNNING_STEPS_JOB}, ${DUNNING_OVERDUE_SCAN_JOB})`.execute(db);
        if (rows[0]!.finished > 0 && rows[0]!.open === 0) break;
        if (performance.now() - started > TIMEOUT_S * 1000) throw new Error('the dunning jobs did not finish');
      }
      steps = N;
    }
    const seconds = (performance.now() - started) / 1000;
    const stepCpu = process.cpuUsage(cpuBefore);
    const { rows: check } = await sql<{ actions: number; mails: number; jobs: number; advanced: number }>`
      SELECT (SELECT count(*)::int FROM dunning_actions WHERE tenant_id = ${tenantId} AND outcome = 'succeeded') AS actions,
             (SELECT coalesce(sum(CASE WHEN payload ? 'emails' THEN jsonb_array_length(payload->'emails') ELSE 1 END), 0)::int
                FROM jobs WHERE kind = 'dunning.send_email') AS mails,
             (SELECT count(*)::int FROM jobs WHERE kind = 'dunning.send_email') AS jobs,
             (SELECT count(*)::int FROM dunning_executions WHERE tenant_id = ${tenantId} AND steps_done = 1 AND status = 'active') AS advanced`.execute(db);
    console.log(
      `step runner: ${steps} steps in ${seconds.toFixed(2)} s (${Math.round(steps / seconds)}/s${STEPS_ONLY ? '' : ', the worker delivering meanwhile'}); ` +
        `${check[0]!.actions} e-mail actions, ${check[0]!.mails} e-mails in ${check[0]!.jobs} e-mail jobs, ${check[0]!.advanced} executions at step 2`,
    );
    if (check[0]!.actions !== N || check[0]!.advanced !== N) throw new Error('not every execution ran its step exactly once');
    if (STEPS_ONLY) {
      console.log(`CPU (this process): ${((stepCpu.user + stepCpu.system) / 1000 / steps).toFixed(3)} ms per step`);
      console.log(JSON.stringify({ steps_per_s: Math.round(steps / seconds), executions: N, peak_rss_mb: Math.round(peakRss / 1048576) }));
      return;
    }
    const deliveredAtStepsEnd = sink.accepted;
    while (sink.accepted < N && performance.now() - started < TIMEOUT_S * 1000) await new Promise((r) => setTimeout(r, 20));
    const total = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    await kosh.worker.stop();
    const { rows: done } = await sql<{ done: number }>`SELECT count(*)::int AS done FROM jobs WHERE kind = 'mail.send' AND state = 'done'`.execute(db);
    const delivered = sink.accepted;
    const afterSteps = total - seconds;
    console.log(
      `delivery: ${delivered} e-mails accepted by the SMTP sink in ${total.toFixed(1)} s (${Math.round(delivered / total)}/s overall; ` +
        `${deliveredAtStepsEnd} while the step runner ran, ${Math.round((delivered - deliveredAtStepsEnd) / Math.max(afterSteps, 0.001))}/s after it); ` +
        `${done[0]!.done} mail jobs marked done; ${sink.duplicates} Message-IDs received twice`,
    );
    console.log(
      `CPU per e-mail end to end: ${((cpu.user + cpu.system) / 1000 / Math.max(delivered, 1)).toFixed(3)} ms Kosh ` +
        `(${((stepCpu.user + stepCpu.system) / 1000 / steps).toFixed(3)} ms while stepping, per step), ` +
        `${((sink.cpuMs - sinkCpuBefore) / Math.max(delivered, 1)).toFixed(3)} ms SMTP sink (child process); PostgreSQL not counted`,
    );
    if (database.kind === 'postgres') {
      // Statements outside a transaction commit on their own, so this counts them too (and the bench's polling).
      console.log(`PostgreSQL commits per e-mail end to end: ${(((await commits()) - commitsBefore) / Math.max(delivered, 1)).toFixed(3)}`);
    }
    if (delivered < N) console.log(`NOT COMPLETE: ${N - delivered} e-mails not delivered within ${TIMEOUT_S} s`);
    console.log(
      JSON.stringify({
        steps_per_s: Math.round(delivered / total),
        executions: N,
        peak_rss_mb: Math.round(peakRss / 1048576),
        delivered,
        duplicates: sink.duplicates,
      }),
    );
  } finally {
    clearInterval(sampler);
    await kosh.close();
    await database.close();
    child.disconnect();
  }
}

(process.argv.includes('--sink') ? runSink() : main()).catch((error) => {
  console.error(error);
  process.exit(1);
});
