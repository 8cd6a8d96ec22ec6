import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { getTenant } from '../tenants/index.js';
import { RECORD_KIND, SECTIONS, type ImportSource, type Section } from './import-source.js';
import {
  describeIssues,
  recordKey,
  recordSchemas,
  type CustomerRecord,
  type FailedRow,
  type ImportReport,
  type PlanRecord,
  type SubscriptionRecord,
} from './importer.schemas.js';
import {
  analyzeSection,
  importCustomers,
  importPlans,
  importSubscriptions,
  type BatchResult,
  type FileKey,
  type SubscriptionReferences,
  type Valid,
} from './importer.service.js';

export type ImportProgress = { section: Section; rows: number; bytes: number; totalBytes: number; finished: boolean };

export type ImportOptions = {
  dryRun?: boolean;
  /** Records per transaction (default 500). */
  batchSize?: number;
  /** The instant stamped on created rows; read once per batch. */
  now: () => Date;
  onProgress?: (progress: ImportProgress) => void;
  /** Runs inside each batch's transaction just before it commits (tests put a crash here). */
  beforeCommit?: (section: Section, batchNumber: number) => Promise<void> | void;
};

const KEY_FIELD = { plans: 'code', customers: 'email', subscriptions: 'external_id' } as const;

function place(item: { line?: number; index: number }): { line: number } | { index: number } {
  return item.line !== undefined ? { line: item.line } : { index: item.index };
}

function describePlace(entry: { line?: number; index: number }): string {
  return entry.line !== undefined ? `line ${entry.line}` : `index ${entry.index}`;
}

/**
 * SPEC 4.17's bulk import: plans, then customers, then subscriptions, each read as a stream and
 * written in batches — one transaction per batch, so a batch is wholly in or not at all, and a
 * crash leaves whole batches behind that a re-run skips (every record is matched by its key:
 * plan code, customer e-mail, subscription external_id). A row that fails validation, names an
 * unknown plan or customer, or is refused by the database is reported with its line (or index)
 * and never stops the others. A dry run does all the same reading and checking in read-only
 * transactions: the database itself guarantees it writes nothing.
 *
 * Like a flow, this owns its transactions; the tenant must exist (404 otherwise).
 */
export async function runImport(db: Kysely<DB>, tenantId: string, source: ImportSource, options: ImportOptions): Promise<ImportReport> {
  const dryRun = options.dryRun ?? false;
  const batchSize = options.batchSize ?? 500;
  const tenant = await getTenant({ tx: db, tenantId, now: options.now() });
  const report: ImportReport = {
    dry_run: dryRun,
    created: { plans: 0, customers: 0, subscriptions: 0 },
    skipped: { plans: 0, customers: 0, subscriptions: 0 },
    failed: [],
  };
  const fileKeys: Record<Section, Map<string, FileKey>> = { plans: new Map(), customers: new Map(), subscriptions: new Map() };
  const references: SubscriptionReferences = {
    plans: new Map(),
    filePlans: fileKeys.plans,
    fileCustomers: fileKeys.customers,
    baseCurrency: tenant.base_currency,
  };
  let batchNumber = 0;

  // Each section's batch holds records its own schema has parsed.
  const runBatch = async (section: Section, batch: Valid<unknown>[]): Promise<BatchResult> => {
    const work = async (ctx: Ctx) => {
      if (section === 'plans') return importPlans(ctx, batch as Valid<PlanRecord>[], dryRun);
      if (section === 'customers') return importCustomers(ctx, batch as Valid<CustomerRecord>[], dryRun);
      return importSubscriptions(ctx, batch as Valid<SubscriptionRecord>[], references, dryRun);
    };
    const number = ++batchNumber;
    if (dryRun)
      return db
        .transaction()
        .setAccessMode('read only')
        .execute((tx) => work({ tx, tenantId, now: options.now() }));
    return db.transaction().execute(async (tx) => {
      const result = await work({ tx, tenantId, now: options.now() });
      await options.beforeCommit?.(section, number);
      return result;
    });
  };

  for (const section of SECTIONS) {
    const kind = RECORD_KIND[section];
    const schema = recordSchemas[section];
    const seen = fileKeys[section];
    let batch: Valid<unknown>[] = [];
    let rows = 0;
    let position = { bytes: 0, totalBytes: source.size(section) };
    const progress = (finished: boolean) => options.onProgress?.({ section, rows, ...position, finished });

    const record = (result: BatchResult) => {
      report.created[section] += result.created;
      report.skipped[section] += result.skipped;
      report.failed.push(...result.failed);
      for (const key of result.failedKeys) {
        const entry = seen.get(section === 'customers' ? key.toLowerCase() : key);
        if (entry) entry.ok = false;
      }
      progress(false);
    };
    // One batch in the database while the next is read and checked; never two at once, so batches
    // commit in file order and a crash leaves a prefix of them behind.
    let inFlight: Promise<void> = Promise.resolve();
    const flush = async () => {
      if (batch.length === 0) return;
      const rows = batch;
      batch = [];
      await inFlight;
      inFlight = runBatch(section, rows).then(record);
      inFlight.catch(() => {}); // awaited (and thrown) at the next flush or the section's end
    };

    let stop = false;
    for await (const item of source.read(section, (p) => {
      position = p;
      progress(false);
    })) {
      if (item.type === 'problem') {
        report.failed.push({
          kind: item.scope === 'file' ? 'file' : kind,
          key: item.key ?? null,
          error: item.message,
          ...(item.line !== undefined ? { line: item.line } : {}),
          ...(item.index !== undefined && item.line === undefined ? { index: item.index } : {}),
        });
        if (item.scope === 'row') continue;
        stop = item.scope === 'file';
        break;
      }
      rows++;
      const parsed = schema.safeParse(item.value);
      const key = recordKey(section, parsed.success ? parsed.data : item.value);
      const match = key !== null && section === 'customers' ? key.toLowerCase() : key;
      const first = match !== null ? seen.get(match) : undefined;
      if (first) {
        report.failed.push({ kind, key, error: `duplicate ${KEY_FIELD[section]} '${key}': already on ${describePlace(first)}`, ...place(item) });
        continue;
      }
      if (match !== null) seen.set(match, { line: item.line, index: item.index, ok: parsed.success });
      if (!parsed.success) {
        report.failed.push({ kind, key, error: describeIssues(parsed.error), ...place(item) });
        continue;
      }
      if (section === 'plans' && dryRun) {
        const plan = parsed.data as PlanRecord;
        seen.get(match!)!.plan = {
          code: plan.code,
          interval_unit: plan.interval_unit,
          interval_count: plan.interval_count,
          prices: [{ currency: plan.currency, amount: plan.amount }],
        };
      }
      batch.push({ record: parsed.data, key: key!, line: item.line, index: item.index });
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    await inFlight;
    if (!dryRun && report.created[section] > 0) await analyzeSection(db, section);
    progress(true);
    if (stop) break;
  }

  const order = (row: FailedRow) => (row.kind === 'file' ? -1 : ['plan', 'customer', 'subscription'].indexOf(row.kind));
  report.failed.sort((a, b) => order(a) - order(b) || (a.line ?? a.index ?? 0) - (b.line ?? b.index ?? 0));
  return report;
}
