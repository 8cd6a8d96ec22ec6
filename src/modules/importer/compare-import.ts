import type { ReadCtx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import { getTenant } from '../tenants/index.js';
import { RECORD_KIND, SECTIONS, type ImportSource, type Section } from './import-source.js';
import {
  customerEmailsAfter,
  findCustomersByEmails,
  findPlansByCodes,
  findSubscriptionsByExternalIds,
  planCodesAfter,
  subscriptionExternalIdsAfter,
  subscriptionIdsWithoutExternalIdAfter,
} from './importer.repository.js';
import {
  describeIssues,
  recordKey,
  recordSchemas,
  type CompareIssue,
  type CompareReport,
  type CoverageCounts,
  type CustomerRecord,
  type PlanRecord,
  type SubscriptionRecord,
} from './importer.schemas.js';

/** A current_period_end further than this from the source's is a continuity issue (SPEC 4.17). */
export const PERIOD_END_TOLERANCE_MS = 3_600_000;
const BATCH = 500;
const KEY_PAGE = 5000;

type Source<R> = { record: R; key: string };
type Issues = CompareIssue[];

function issue(kind: CompareIssue['kind'], key: string | null, field: string, expected: CompareIssue['expected'], found: CompareIssue['found']): CompareIssue {
  return { kind, key, field, expected, found };
}

async function comparePlans(ctx: ReadCtx, batch: Source<PlanRecord>[], issues: Issues): Promise<number> {
  const kosh = new Map(
    (
      await findPlansByCodes(
        ctx.tx,
        ctx.tenantId,
        batch.map((b) => b.key),
      )
    ).map((p) => [p.code, p]),
  );
  for (const { record, key } of batch) {
    const plan = kosh.get(key);
    if (!plan) {
      issues.push(issue('plan', key, 'record', 'present', 'missing'));
      continue;
    }
    if (plan.interval_unit !== record.interval_unit) issues.push(issue('plan', key, 'interval_unit', record.interval_unit, plan.interval_unit));
    if (plan.interval_count !== record.interval_count) issues.push(issue('plan', key, 'interval_count', record.interval_count, plan.interval_count));
    const price = plan.prices.find((p) => p.currency === record.currency);
    if (!price) issues.push(issue('plan', key, 'currency', record.currency, plan.prices.map((p) => p.currency).join(', ') || null));
    else if (price.amount !== record.amount) issues.push(issue('plan', key, 'amount', record.amount, price.amount));
  }
  return kosh.size;
}

async function compareCustomers(ctx: ReadCtx, batch: Source<CustomerRecord>[], issues: Issues): Promise<number> {
  const found = await findCustomersByEmails(
    ctx.tx,
    ctx.tenantId,
    batch.map((b) => b.key),
  );
  const kosh = new Map(found.map((c) => [c.email.toLowerCase(), c]));
  for (const { record, key } of batch) {
    const customer = kosh.get(key);
    if (!customer) {
      issues.push(issue('customer', record.email, 'record', 'present', 'missing'));
      continue;
    }
    const name = record.name ?? null;
    if (customer.name !== name) issues.push(issue('customer', record.email, 'name', name, customer.name));
  }
  return kosh.size;
}

async function compareSubscriptions(ctx: ReadCtx, batch: Source<SubscriptionRecord>[], issues: Issues): Promise<number> {
  const kosh = new Map(
    (
      await findSubscriptionsByExternalIds(
        ctx.tx,
        ctx.tenantId,
        batch.map((b) => b.key),
      )
    ).map((s) => [s.external_id!, s]),
  );
  for (const { record, key } of batch) {
    const sub = kosh.get(key);
    if (!sub) {
      issues.push(issue('subscription', key, 'record', 'present', 'missing'));
      continue;
    }
    if (sub.status !== record.status) issues.push(issue('subscription', key, 'status', record.status, sub.status));
    if (Math.abs(sub.current_period_end.getTime() - record.current_period_end.getTime()) > PERIOD_END_TOLERANCE_MS) {
      issues.push(issue('subscription', key, 'current_period_end', record.current_period_end.toISOString(), sub.current_period_end.toISOString()));
    }
    if (sub.cancel_at_period_end !== record.cancel_at_period_end) {
      issues.push(issue('subscription', key, 'cancel_at_period_end', record.cancel_at_period_end, sub.cancel_at_period_end));
    }
    if (sub.customer_email.toLowerCase() !== record.customer_email.toLowerCase()) {
      issues.push(issue('subscription', key, 'customer_email', record.customer_email, sub.customer_email));
    }
    if (sub.plan_code !== record.plan_code) issues.push(issue('subscription', key, 'plan_code', record.plan_code, sub.plan_code));
  }
  return kosh.size;
}

/** Pages through every key Kosh has for `section`; answers how many there are. */
async function scanKoshKeys(tx: Tx, tenantId: string, section: Section, visit: (key: string, display: string) => void): Promise<number> {
  const pagers: ((after: string | null) => Promise<string[]>)[] =
    section === 'plans'
      ? [(after) => planCodesAfter(tx, tenantId, after, KEY_PAGE)]
      : section === 'customers'
        ? [(after) => customerEmailsAfter(tx, tenantId, after, KEY_PAGE)]
        : [
            (after) => subscriptionExternalIdsAfter(tx, tenantId, after, KEY_PAGE),
            (after) => subscriptionIdsWithoutExternalIdAfter(tx, tenantId, after, KEY_PAGE),
          ];
  let total = 0;
  for (const [n, page] of pagers.entries()) {
    let after: string | null = null;
    for (;;) {
      const keys = await page(after);
      for (const key of keys) visit(n === 0 ? key : `\u0000${key}`, n === 0 ? key : `id:${key}`);
      total += keys.length;
      if (keys.length < KEY_PAGE) break;
      after = keys[keys.length - 1]!;
    }
  }
  return total;
}

export type CompareProgress = { section: Section; rows: number; bytes: number; totalBytes: number; finished: boolean };

/**
 * The compare gate (SPEC 4.17): a source export against the tenant's live records, per record —
 * coverage (in the source and missing in Kosh, or in Kosh and not in the source), plan fidelity
 * (interval, currency, amount), customer identity (matched by e-mail case-insensitively; name),
 * subscription continuity (status, cancel_at_period_end, customer, plan, and current_period_end
 * within an hour). A source record that is not valid, or repeats a key, is an issue too.
 * `ready` only with no issue at all. Read-only: run it in a read-only transaction for one snapshot.
 */
export async function compareImport(ctx: ReadCtx, source: ImportSource, onProgress?: (progress: CompareProgress) => void): Promise<CompareReport> {
  await getTenant(ctx); // 404 for a tenant that does not exist
  const issues: Issues = [];
  const empty = (): CoverageCounts => ({ in_source: 0, in_kosh: 0, matched: 0, missing: 0, extra: 0 });
  const coverage = { plans: empty(), customers: empty(), subscriptions: empty() };

  for (const section of SECTIONS) {
    const kind = RECORD_KIND[section];
    const schema = recordSchemas[section];
    const keys = new Map<string, string>(); // match key → where it was first seen
    const counts = coverage[section];
    let batch: Source<unknown>[] = [];
    let rows = 0;
    let position = { bytes: 0, totalBytes: source.size(section) };
    const progress = (finished: boolean) => onProgress?.({ section, rows, ...position, finished });

    const flush = async () => {
      if (batch.length === 0) return;
      // Each section's batch holds records its own schema has parsed.
      const matched =
        section === 'plans'
          ? await comparePlans(ctx, batch as Source<PlanRecord>[], issues)
          : section === 'customers'
            ? await compareCustomers(ctx, batch as Source<CustomerRecord>[], issues)
            : await compareSubscriptions(ctx, batch as Source<SubscriptionRecord>[], issues);
      counts.matched += matched;
      counts.missing += batch.length - matched;
      batch = [];
      progress(false);
    };

    let broken = false;
    for await (const item of source.read(section, (p) => {
      position = p;
      progress(false);
    })) {
      const where = item.line !== undefined ? `line ${item.line}` : `index ${item.index}`;
      if (item.type === 'problem') {
        issues.push(issue(item.scope === 'file' ? 'file' : kind, item.key ?? null, 'source', 'a readable record', `${where}: ${item.message}`));
        if (item.scope === 'row') continue;
        broken = item.scope === 'file';
        break;
      }
      rows++;
      const parsed = schema.safeParse(item.value);
      const given = recordKey(section, parsed.success ? parsed.data : item.value);
      const match = given !== null && section === 'customers' ? given.toLowerCase() : given;
      if (match !== null && keys.has(match)) {
        issues.push(issue(kind, given, 'source', 'one record per key', `${where}: repeats the record on ${keys.get(match)}`));
        continue;
      }
      if (match !== null) keys.set(match, where);
      if (!parsed.success) {
        issues.push(issue(kind, given, 'source', 'a valid record', `${where}: ${describeIssues(parsed.error)}`));
        continue;
      }
      counts.in_source++;
      batch.push({ record: parsed.data, key: match! });
      if (batch.length >= BATCH) await flush();
    }
    await flush();
    if (broken) break;

    counts.in_kosh = await scanKoshKeys(ctx.tx, ctx.tenantId, section, (key, display) => {
      if (keys.has(key)) return;
      counts.extra++;
      issues.push(issue(kind, display, 'record', 'absent', 'present'));
    });
    progress(true);
  }
  return { ready: issues.length === 0, issues, coverage };
}
