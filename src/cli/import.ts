import { accessSync, constants } from 'node:fs';
import { Command, CommanderError } from 'commander';
import cliProgress from 'cli-progress';
import { loadConfig } from '../platform/config.js';
import { openDatabase, type Database } from '../platform/db/database.js';
import { DataDirLockedError } from '../platform/db/datadir-lock.js';
import { migrate, readMigrations } from '../platform/db/migrate.js';
import { isKoshError } from '../platform/errors.js';
import { isUuid } from '../platform/ids.js';
import {
  compareImport,
  csvFileSource,
  jsonFileSource,
  runImport,
  type CompareReport,
  type ImportReport,
  type ImportSource,
  type Section,
} from '../modules/importer/index.js';

/**
 * `kosh import` and `kosh import compare` (SPEC 4.17, DESIGN §9 and §10). Exit codes: 0 done (every
 * row imported or skipped; compare: ready), 1 not (a row failed; compare: issues found; or the
 * database could not be used), 2 a usage error (bad options, unreadable file, unknown tenant).
 */

const EXIT_OK = 0;
const EXIT_NOT_DONE = 1;
const EXIT_USAGE = 2;

class UsageError extends Error {}

type SourceOptions = { tenant?: string; file?: string; plans?: string; customers?: string; subscriptions?: string };

function readable(path: string, option: string): string {
  try {
    accessSync(path, constants.R_OK);
  } catch {
    throw new UsageError(`${option} ${path}: no such readable file`);
  }
  return path;
}

/** The tenant and the source the options name, or a UsageError saying what is wrong. */
function sourceFromOptions(options: SourceOptions): { tenantId: string; source: ImportSource; files: string } {
  if (!options.tenant) throw new UsageError('--tenant <uuid> is required');
  if (!isUuid(options.tenant)) throw new UsageError(`--tenant ${options.tenant}: not a UUID`);
  const csv = (['plans', 'customers', 'subscriptions'] as const).filter((section) => options[section]);
  if (options.file && csv.length) throw new UsageError('give either --file (JSON) or --plans/--customers/--subscriptions (CSV), not both');
  if (options.file) {
    return { tenantId: options.tenant, source: jsonFileSource(readable(options.file, '--file')), files: options.file };
  }
  if (!csv.length) throw new UsageError('give --file data.json, or CSV files with --plans, --customers and/or --subscriptions');
  const files: Partial<Record<Section, string>> = {};
  for (const section of csv) files[section] = readable(options[section]!, `--${section}`);
  return { tenantId: options.tenant, source: csvFileSource(files), files: Object.values(files).join(', ') };
}

/**
 * The database. A real import brings the schema up to date first, as `kosh serve` does; a dry run
 * and the compare gate write nothing at all, so they only check that it is up to date.
 */
async function openStorage(mode: 'write' | 'read'): Promise<Database> {
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    if (mode === 'write') {
      await migrate(database.pool);
    } else {
      const applied = await database.pool.query<{ version: string }>('SELECT version FROM schema_migrations').then(
        (result) => new Set(result.rows.map((r) => r.version)),
        () => new Set<string>(),
      );
      const pending = readMigrations().filter((m) => !applied.has(m.version));
      if (pending.length) throw new Error(`the database is not up to date (${pending.length} migration(s) pending): run 'kosh migrate' first`);
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** Runs a command body and turns what it throws into a message on stderr and an exit code. */
async function withExitCode(body: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await body();
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`kosh import: ${error.message}`);
      process.exitCode = EXIT_USAGE;
    } else if (isKoshError(error) && error.kind === 'not_found') {
      console.error(`kosh import: ${error.message}: --tenant must name an existing tenant`);
      process.exitCode = EXIT_USAGE;
    } else if (error instanceof DataDirLockedError) {
      console.error(`kosh import: ${error.message}`);
      process.exitCode = EXIT_NOT_DONE;
    } else {
      console.error(`kosh import: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = EXIT_NOT_DONE;
    }
  }
}

// ── progress ────────────────────────────────────────────────────────────────────────────────────

type Progress = { section: Section; rows: number; bytes: number; totalBytes: number; finished: boolean };

/**
 * On a terminal, a bar per section (bytes of its file, rows, rows/s, ETA); otherwise a plain line
 * to stderr every few seconds and one when a section is done. stdout is left to the report.
 */
function progressReporter(verb: string): { update: (p: Progress) => void; stop: () => void } {
  const started = new Map<Section, number>();
  if (process.stderr.isTTY) {
    let bar: cliProgress.SingleBar | null = null;
    let current: Section | null = null;
    return {
      update(p) {
        if (current !== p.section) {
          bar?.stop();
          current = p.section;
          started.set(p.section, Date.now());
          bar = new cliProgress.SingleBar(
            {
              stream: process.stderr,
              format: `${verb} ${p.section.padEnd(13)} [{bar}] {percentage}% | {rows} rows | {rate} rows/s | ETA {eta_formatted}`,
              hideCursor: true,
              etaBuffer: 50,
              fps: 5,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(Math.max(p.totalBytes, 1), 0, { rows: 0, rate: 0 });
        }
        const seconds = Math.max((Date.now() - started.get(p.section)!) / 1000, 0.001);
        bar!.update(p.finished ? Math.max(p.totalBytes, 1) : Math.min(p.bytes, Math.max(p.totalBytes, 1)), {
          rows: p.rows,
          rate: Math.round(p.rows / seconds),
        });
        if (p.finished) {
          bar!.stop();
          bar = null;
          current = null;
        }
      },
      stop: () => bar?.stop(),
    };
  }
  let lastLine = 0;
  return {
    update(p) {
      if (!started.has(p.section)) started.set(p.section, Date.now());
      const now = Date.now();
      if (!p.finished && now - lastLine < 2000) return;
      lastLine = now;
      const seconds = Math.max((now - started.get(p.section)!) / 1000, 0.001);
      const share = p.totalBytes ? `, ${Math.floor((100 * p.bytes) / p.totalBytes)}% of the file` : '';
      const state = p.finished ? `done, ${p.rows} rows in ${seconds.toFixed(1)} s` : `${p.rows} rows${share}`;
      console.error(`kosh import: ${verb} ${p.section}: ${state} (${Math.round(p.rows / seconds)} rows/s)`);
    },
    stop: () => {},
  };
}

// ── output ──────────────────────────────────────────────────────────────────────────────────────

const SHOWN = 50;

function printImportReport(report: ImportReport, tenantId: string): void {
  const out: string[] = [];
  out.push(report.dry_run ? `Dry run for tenant ${tenantId}: nothing was written.` : `Imported into tenant ${tenantId}.`);
  const [created, skipped] = report.dry_run ? ['would create', 'would skip'] : ['created', 'skipped'];
  const failedBy = (kind: string) => report.failed.filter((f) => f.kind === kind).length;
  out.push(`  ${''.padEnd(14)}${created.padStart(13)}${skipped.padStart(12)}${'failed'.padStart(8)}`);
  for (const [section, kind] of [
    ['plans', 'plan'],
    ['customers', 'customer'],
    ['subscriptions', 'subscription'],
  ] as const) {
    out.push(
      `  ${section.padEnd(14)}${String(report.created[section]).padStart(13)}${String(report.skipped[section]).padStart(12)}${String(failedBy(kind)).padStart(8)}`,
    );
  }
  if (report.failed.length) {
    out.push('', `Failed (${report.failed.length}):`);
    for (const f of report.failed.slice(0, SHOWN)) {
      const where = f.line !== undefined ? `line ${f.line}` : f.index !== undefined ? `#${f.index}` : '';
      out.push(`  ${f.kind} ${where}${f.key ? ` (${f.key})` : ''}: ${f.error}`);
    }
    if (report.failed.length > SHOWN) out.push(`  … and ${report.failed.length - SHOWN} more (--json lists them all)`);
  }
  if (!report.dry_run) out.push('', 'No invoice was issued: each subscription is next invoiced at its current_period_end by the billing run.');
  console.log(out.join('\n'));
}

function printCompareReport(report: CompareReport): void {
  const out: string[] = [report.ready ? 'READY: the source and Kosh agree.' : `NOT READY: ${report.issues.length} issue(s).`, ''];
  out.push(`  ${''.padEnd(14)}${'in source'.padStart(10)}${'in Kosh'.padStart(9)}${'matched'.padStart(9)}${'missing'.padStart(9)}${'extra'.padStart(7)}`);
  for (const section of ['plans', 'customers', 'subscriptions'] as const) {
    const c = report.coverage[section];
    out.push(
      `  ${section.padEnd(14)}${String(c.in_source).padStart(10)}${String(c.in_kosh).padStart(9)}${String(c.matched).padStart(9)}${String(c.missing).padStart(9)}${String(c.extra).padStart(7)}`,
    );
  }
  if (report.issues.length) {
    out.push('', 'Issues:');
    for (const i of report.issues.slice(0, SHOWN)) {
      out.push(`  ${i.kind} ${i.key ?? ''} ${i.field}: expected ${JSON.stringify(i.expected)}, found ${JSON.stringify(i.found)}`);
    }
    if (report.issues.length > SHOWN) out.push(`  … and ${report.issues.length - SHOWN} more (--json lists them all)`);
  }
  console.log(out.join('\n'));
}

// ── commands ────────────────────────────────────────────────────────────────────────────────────

type ImportCommandOptions = SourceOptions & { dryRun?: boolean; json?: boolean; batchSize: string };

async function importAction(options: ImportCommandOptions): Promise<number> {
  const { tenantId, source } = sourceFromOptions(options);
  const batchSize = Number(options.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 5000) throw new UsageError('--batch-size must be a whole number from 1 to 5000');
  const database = await openStorage(options.dryRun ? 'read' : 'write');
  const progress = progressReporter(options.dryRun ? 'checking' : 'importing');
  try {
    const report = await runImport(database.db, tenantId, source, {
      dryRun: options.dryRun ?? false,
      batchSize,
      now: () => new Date(),
      onProgress: progress.update,
    });
    progress.stop();
    if (options.json) console.log(JSON.stringify(report));
    else printImportReport(report, tenantId);
    return report.failed.length ? EXIT_NOT_DONE : EXIT_OK;
  } finally {
    progress.stop();
    await database.close();
  }
}

async function compareAction(options: SourceOptions & { json?: boolean }): Promise<number> {
  const { tenantId, source } = sourceFromOptions(options);
  const database = await openStorage('read');
  const progress = progressReporter('comparing');
  try {
    // One snapshot for the whole comparison, and a transaction that cannot write.
    const report = await database.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((tx) => compareImport({ tx, tenantId, now: new Date() }, source, progress.update));
    progress.stop();
    if (options.json) console.log(JSON.stringify(report));
    else printCompareReport(report);
    return report.ready ? EXIT_OK : EXIT_NOT_DONE;
  } finally {
    progress.stop();
    await database.close();
  }
}

/** Usage errors exit 2 (commander's own, like an unknown option, included); --help exits 0. */
function exitTwoOnUsageErrors(error: CommanderError): never {
  process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
}

/**
 * `kosh import [compare]`. `compare` is an argument rather than a subcommand: both forms take the
 * same options, and commander hands options given after a nested subcommand to its parent unless
 * the whole program switches to positional options.
 */
export function importCommand(): Command {
  return new Command('import')
    .description(
      'Import plans, customers and subscriptions without invoicing or charging anyone (SPEC 4.17);\n' +
        '`kosh import compare …` compares a source export with the live records (read-only) and exits 0 only when ready.\n' +
        'Exit codes: 0 done / ready, 1 rows failed / not ready, 2 usage error.',
    )
    .argument('[compare]', 'run the compare gate instead of importing')
    .option('--tenant <uuid>', 'the tenant (it must exist)')
    .option('--file <path>', 'a JSON document { plans: [...], customers: [...], subscriptions: [...] }')
    .option('--plans <path>', 'plans as CSV')
    .option('--customers <path>', 'customers as CSV')
    .option('--subscriptions <path>', 'subscriptions as CSV')
    .option('--dry-run', 'check every row and write nothing (import only)')
    .option('--batch-size <n>', 'records per transaction (import only)', '500')
    .option('--json', 'print only the JSON report on stdout')
    .exitOverride(exitTwoOnUsageErrors)
    .action((action: string | undefined, options: ImportCommandOptions) =>
      withExitCode(async () => {
        if (action === undefined) return importAction(options);
        if (action !== 'compare') throw new UsageError(`unknown action '${action}' (the only one is 'compare')`);
        if (options.dryRun) throw new UsageError('compare is always read-only: --dry-run does not apply');
        return compareAction(options);
      }),
    );
}
