import type { Page } from '../../platform/http/envelope.js';
import type { Kysely } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { DB, Tx } from '../../platform/db/schema.js';
import { errors, KoshError } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { findEntity } from '../entities/index.js';
import { accountId, CONTROL_ACCOUNT_CODE, ledgerNumber, ledgerParts } from '../ledger/index.js';
import type { Discrepancy, ReconciliationReport, ReconciliationRun } from './finance.schemas.js';
import {
  ALL_ENTITIES_SCOPE,
  creditNotePage,
  discrepanciesOf,
  entryPage,
  findRun,
  findRunningRun,
  finishRun,
  insertDiscrepancies,
  insertRun,
  invoicePage,
  journalTotals,
  latestRun,
  linesWithTransfers,
  listRuns,
  paymentPage,
  secondaryAccounts,
  type DiscrepancyRow,
  type RunRow,
} from './reconciliation.repository.js';

/** At most this many discrepancies are stored (and listed) per run; the count covers them all. */
export const MAX_STORED_DISCREPANCIES = 1_000;
/** Records per keyset page of a run. */
export const RECONCILIATION_PAGE = 2_000;
const NIL = '00000000-0000-0000-0000-000000000000';

export const RUN_JOB = 'finance.reconciliation_run';

export type Found = {
  type: string;
  invoice_id?: string | null;
  transaction_id?: string | null;
  reference_id?: string | null;
  account_code?: number;
  currency?: string | null;
  expected: number;
  found: number;
  detail: string;
};

function toDiscrepancy(d: DiscrepancyRow): Discrepancy {
  return {
    type: d.type,
    invoice_id: d.invoice_id,
    transaction_id: d.transaction_id,
    reference_id: d.reference_id,
    account_code: d.account_code,
    currency: d.currency,
    expected_amount: Number(d.expected_amount),
    found_amount: Number(d.found_amount),
    expected: Number(d.expected_amount),
    found: Number(d.found_amount),
    detail: d.detail,
  };
}

export function toRun(row: RunRow, discrepancies?: DiscrepancyRow[]): ReconciliationRun {
  const n = (v: number) => Number(v);
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    entity_id: row.entity_id,
    status: row.status,
    run_by: row.run_by,
    run_at: toIso(row.started_at),
    started_at: toIso(row.started_at),
    completed_at: toIsoOrNull(row.completed_at),
    created_at: toIso(row.created_at),
    invoices_checked: n(row.invoices_checked),
    paid_invoices_checked: n(row.paid_invoices_checked),
    total_discrepancies: n(row.total_discrepancies),
    discrepancy_count: n(row.total_discrepancies),
    tb_compared: row.tb_compared,
    tb_accounts_checked: n(row.tb_accounts_checked),
    tb_transfers_checked: n(row.tb_transfers_checked),
    checked: {
      invoices: n(row.invoices_checked),
      payments: n(row.payments_checked),
      credit_notes: n(row.credit_notes_checked),
      journal_entries: n(row.journal_entries_checked),
      transfers: n(row.tb_transfers_checked),
      accounts: n(row.tb_accounts_checked),
    },
    discrepancies_truncated: row.discrepancies_truncated,
    failure: row.failure,
    ...(discrepancies ? { discrepancies: discrepancies.map(toDiscrepancy) } : {}),
  };
}

/**
 * Starts a run (202): records it as running and queues the job that does the work. A run already
 * running for the same scope (an entity, or every entity) answers 409 with its id.
 */
export async function requestRun(ctx: Ctx, input: { entity_id?: string | undefined }, runBy: string | null): Promise<ReconciliationRun> {
  if (input.entity_id && !(await findEntity(ctx.tx, ctx.tenantId, input.entity_id))) throw errors.notFound('entity');
  const scope = input.entity_id ?? ALL_ENTITIES_SCOPE;
  const running = await findRunningRun(ctx.tx, ctx.tenantId, scope);
  if (running) throw runningConflict(running.id);
  const row = await startRun(ctx, input.entity_id ?? null, runBy);
  if (!row) {
    const winner = await findRunningRun(ctx.tx, ctx.tenantId, scope);
    throw runningConflict(winner?.id ?? 'unknown');
  }
  return toRun(row, []);
}

function runningConflict(id: string): KoshError {
  return new KoshError('conflict', `a reconciliation run is already running for this scope: ${id}`, {
    reason: 'reconciliation_running',
    details: [{ field: 'running_run_id', message: id }],
  });
}

/** Inserts a running run and queues its job; null when one is running for the scope already. */
export async function startRun(ctx: Ctx, entityId: string | null, runBy: string | null): Promise<RunRow | null> {
  const id = newId();
  const inserted = await insertRun(ctx.tx, {
    tenant_id: ctx.tenantId,
    id,
    entity_id: entityId,
    scope: entityId ?? ALL_ENTITIES_SCOPE,
    status: 'running',
    run_by: runBy,
    started_at: ctx.now,
    created_at: ctx.now,
  });
  if (!inserted) return null;
  await enqueueJob(ctx.tx, ctx.now, { kind: RUN_JOB, tenantId: ctx.tenantId, payload: { run_id: id }, maxAttempts: 3 });
  return (await findRun(ctx.tx, ctx.tenantId, id)) ?? null;
}

export async function getRun(ctx: ReadCtx, id: string): Promise<ReconciliationRun> {
  const row = await findRun(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('reconciliation run');
  return toRun(row, await discrepanciesOf(ctx.tx, ctx.tenantId, id));
}

/** The latest run with its discrepancies; a tenant that never ran one gets the empty report. */
export async function getLatestRun(ctx: ReadCtx): Promise<ReconciliationReport> {
  const row = await latestRun(ctx.tx, ctx.tenantId);
  if (!row) return emptyReport(ctx.tenantId);
  return toRun(row, await discrepanciesOf(ctx.tx, ctx.tenantId, row.id));
}

function emptyReport(tenantId: string): ReconciliationReport {
  return {
    id: null,
    tenant_id: tenantId,
    entity_id: null,
    status: 'not_run',
    run_by: null,
    run_at: null,
    started_at: null,
    completed_at: null,
    created_at: null,
    invoices_checked: 0,
    paid_invoices_checked: 0,
    total_discrepancies: 0,
    discrepancy_count: 0,
    tb_compared: false,
    tb_accounts_checked: 0,
    tb_transfers_checked: 0,
    checked: { invoices: 0, payments: 0, credit_notes: 0, journal_entries: 0, transfers: 0, accounts: 0 },
    discrepancies_truncated: false,
    failure: null,
    discrepancies: [],
  };
}

export async function listReconciliationRuns(ctx: ReadCtx, page: Page) {
  const { runs, total } = await listRuns(ctx.tx, ctx.tenantId, page);
  return { runs: runs.map((r) => toRun(r)), total };
}

export type RunCounts = {
  invoices: number;
  paidInvoices: number;
  payments: number;
  creditNotes: number;
  entries: number;
  transfers: number;
  accounts: number;
};

/** Keeps the first MAX_STORED_DISCREPANCIES and counts them all. */
class Findings {
  readonly kept: Found[] = [];
  count = 0;
  add(d: Found): void {
    this.count += 1;
    if (this.kept.length < MAX_STORED_DISCREPANCIES) this.kept.push(d);
  }
}

type InvoiceRecord = Awaited<ReturnType<typeof invoicePage>>[number];
type PaymentRecord = Awaited<ReturnType<typeof paymentPage>>[number];
type CreditNoteRecord = Awaited<ReturnType<typeof creditNotePage>>[number];
type EntryRecord = Awaited<ReturnType<typeof entryPage>>[number];
type LineRecord = Awaited<ReturnType<typeof linesWithTransfers>>[number];

/** Walks a keyset-paged read (ids ascending) page by page. */
async function forEachPage<T extends { id: string }>(read: (after: string) => Promise<T[]>, visit: (rows: T[]) => Promise<void> | void): Promise<void> {
  for (let after = NIL; ;) {
    const rows = await read(after);
    await visit(rows);
    if (rows.length < RECONCILIATION_PAGE) break;
    after = rows[rows.length - 1]!.id;
  }
}

/** A finalized invoice has its entry, for its total, and receivables tagged with it equal to what it still owes. */
function checkInvoice(f: Findings, r: InvoiceRecord): void {
  if (r.total > 0 && !r.entry_id) {
    f.add({
      type: 'missing_invoice_transaction',
      invoice_id: r.id,
      currency: r.currency,
      expected: r.total,
      found: 0,
      detail: 'no invoice.finalized entry',
    });
  } else if (r.entry_id && r.entry_debits !== r.total) {
    f.add({
      type: 'amount_mismatch',
      invoice_id: r.id,
      transaction_id: r.entry_id,
      currency: r.currency,
      expected: r.total,
      found: r.entry_debits ?? 0,
      detail: 'invoice total ≠ debits of its finalization entry',
    });
  }
  const expectedReceivable = r.status === 'void' ? 0 : r.amount_due;
  if (r.receivable !== expectedReceivable) {
    f.add({
      type: 'receivable_mismatch',
      invoice_id: r.id,
      account_code: 1100,
      currency: r.currency,
      expected: expectedReceivable,
      found: r.receivable,
      detail: 'receivables tagged with the invoice ≠ amount_due',
    });
  }
}

/** A payment has its entry, for its amount plus the TDS withheld. */
function checkPayment(f: Findings, r: PaymentRecord): void {
  const expected = r.amount + r.tds_amount;
  if (!r.entry_id) {
    f.add({
      type: 'missing_payment_transaction',
      invoice_id: r.invoice_id,
      reference_id: r.id,
      currency: r.currency,
      expected,
      found: 0,
      detail: `no payment.recorded entry for payment ${r.id}`,
    });
  } else if (r.entry_debits !== expected) {
    f.add({
      type: 'amount_mismatch',
      invoice_id: r.invoice_id,
      transaction_id: r.entry_id,
      reference_id: r.id,
      currency: r.currency,
      expected,
      found: r.entry_debits ?? 0,
      detail: 'payment amount + TDS ≠ debits of its entry',
    });
  }
}

/** A credit note has its issue entry for its amount, its write-off once expired, and customer credit tagged with it equal to its balance. */
function checkCreditNote(f: Findings, r: CreditNoteRecord): void {
  if (!r.entry_id) {
    f.add({
      type: 'missing_credit_note_transaction',
      invoice_id: r.invoice_id,
      reference_id: r.id,
      currency: r.currency,
      expected: r.amount,
      found: 0,
      detail: `no credit_note.issued entry for credit note ${r.id}`,
    });
  } else if (r.entry_debits !== r.amount) {
    f.add({
      type: 'amount_mismatch',
      invoice_id: r.invoice_id,
      transaction_id: r.entry_id,
      reference_id: r.id,
      currency: r.currency,
      expected: r.amount,
      found: r.entry_debits ?? 0,
      detail: 'credit note amount ≠ debits of its entry',
    });
  }
  if (r.status === 'expired' && !r.write_off_id) {
    f.add({
      type: 'missing_write_off_transaction',
      invoice_id: r.invoice_id,
      reference_id: r.id,
      currency: r.currency,
      expected: 0,
      found: 0,
      detail: `no credit_note.expired entry for expired credit note ${r.id}`,
    });
  }
  const expectedCredit = r.status === 'void' ? 0 : r.balance;
  if (r.credit_balance !== expectedCredit) {
    f.add({
      type: 'credit_balance_mismatch',
      invoice_id: r.invoice_id,
      reference_id: r.id,
      account_code: 2300,
      currency: r.currency,
      expected: expectedCredit,
      found: r.credit_balance,
      detail: 'customer credit tagged with the note ≠ its balance',
    });
  }
}

/** Secondary-ledger account ids per (ledger, code), computed once. */
function accountIds(tenantId: string): (ledger: number, code: number) => string {
  const ids = new Map<string, string>();
  return (ledger, code) => {
    const key = `${ledger}:${code}`;
    let id = ids.get(key);
    if (!id) ids.set(key, (id = accountId(tenantId, ledger, code)));
    return id;
  };
}

/** A journal line has its transfer, for the same amount, between its account and the control account of its ledger, tagged with its entry. */
function checkLine(f: Findings, e: EntryRecord, l: LineRecord, ledger: number, idOf: (ledger: number, code: number) => string): void {
  const invoiceId = e.reference_type === 'invoice' ? e.reference_id : null;
  const isDebit = l.debit > 0;
  const amount = isDebit ? l.debit : l.credit;
  const base = { invoice_id: invoiceId, transaction_id: e.id, reference_id: e.reference_id, account_code: l.account_code, currency: e.currency };
  if (!l.transfer_id) {
    f.add({ ...base, type: 'tb_missing_transfer', expected: amount, found: 0, detail: `journal line ${l.id} has no transfer` });
    return;
  }
  const own = idOf(ledger, l.account_code);
  const control = idOf(ledger, CONTROL_ACCOUNT_CODE);
  const accountsMatch = isDebit ? l.debit_account_id === own && l.credit_account_id === control : l.debit_account_id === control && l.credit_account_id === own;
  if (l.amount !== amount || !accountsMatch || l.ledger !== ledger || l.user_data_128 !== e.id) {
    f.add({
      ...base,
      type: 'tb_amount_mismatch',
      expected: amount,
      found: l.amount ?? 0,
      detail: accountsMatch ? `transfer ${l.id} amount differs from its journal line` : `transfer ${l.id} posts to other accounts than its journal line`,
    });
  }
}

/** An entry refers to a record that exists; once fed to the secondary ledger, each of its lines has its transfer and it balances. */
function checkEntry(f: Findings, counts: RunCounts, e: EntryRecord, lines: LineRecord[], idOf: (ledger: number, code: number) => string): void {
  const invoiceId = e.reference_type === 'invoice' ? e.reference_id : null;
  if (!e.reference_exists) {
    f.add({
      type: 'orphan_transaction',
      transaction_id: e.id,
      reference_id: e.reference_id,
      currency: e.currency,
      expected: 0,
      found: 0,
      detail: `${e.kind} entry refers to a ${e.reference_type} that does not exist`,
    });
  }
  if (e.pending) return;
  const ledger = ledgerNumber(e.ledger_id, e.currency);
  let debits = 0;
  let credits = 0;
  for (const l of lines) {
    counts.transfers += 1;
    debits += l.debit;
    credits += l.credit;
    checkLine(f, e, l, ledger, idOf);
  }
  if (debits !== credits) {
    f.add({
      type: 'unbalanced_entry',
      invoice_id: invoiceId,
      transaction_id: e.id,
      reference_id: e.reference_id,
      currency: e.currency,
      expected: debits,
      found: credits,
      detail: 'entry debits ≠ credits',
    });
  }
}

/** Journal → secondary ledger, entry by entry (entries still waiting in the feed's outbox are left out). */
async function compareEntries(tx: Tx, tenantId: string, entityId: string | null, counts: RunCounts, f: Findings): Promise<void> {
  const idOf = accountIds(tenantId);
  await forEachPage(
    (after) => entryPage(tx, tenantId, entityId, after, RECONCILIATION_PAGE),
    async (entries) => {
      const lines = await linesWithTransfers(
        tx,
        tenantId,
        entries.filter((e) => !e.pending).map((e) => e.id),
      );
      const byEntry = new Map<string, LineRecord[]>();
      for (const l of lines) {
        const list = byEntry.get(l.entry_id);
        if (list) list.push(l);
        else byEntry.set(l.entry_id, [l]);
      }
      for (const e of entries) {
        counts.entries += 1;
        checkEntry(f, counts, e, byEntry.get(e.id) ?? [], idOf);
      }
    },
  );
}

type ExpectedBalance = { ledger: number; code: number; currency: string; debits: number; credits: number };

/** The journal's totals per (ledger, code), each line mirrored on its ledger's control account. */
async function journalBalances(tx: Tx, tenantId: string, entityId: string | null): Promise<Map<string, ExpectedBalance>> {
  const expected = new Map<string, ExpectedBalance>();
  const slot = (ledger: number, code: number, currency: string) => {
    const key = `${ledger}:${code}`;
    let s = expected.get(key);
    if (!s) expected.set(key, (s = { ledger, code, currency, debits: 0, credits: 0 }));
    return s;
  };
  for (const t of await journalTotals(tx, tenantId, entityId)) {
    const ledger = ledgerNumber(t.ledger_id, t.currency);
    const own = slot(ledger, t.account_code, t.currency);
    own.debits += t.debit;
    own.credits += t.credit;
    const control = slot(ledger, CONTROL_ACCOUNT_CODE, t.currency);
    control.debits += t.credit;
    control.credits += t.debit;
  }
  return expected;
}

/** Account balances per (ledger, code): the journal's totals against debits/credits_posted. */
async function compareAccounts(tx: Tx, tenantId: string, entityId: string | null, counts: RunCounts, f: Findings): Promise<void> {
  const expected = await journalBalances(tx, tenantId, entityId);
  const accounts = await secondaryAccounts(tx, tenantId, entityId);
  const seen = new Set<string>();
  for (const a of accounts) {
    counts.accounts += 1;
    const key = `${a.ledger}:${a.code}`;
    seen.add(key);
    const want = expected.get(key) ?? { debits: 0, credits: 0 };
    if (want.debits !== a.debits_posted || want.credits !== a.credits_posted) {
      f.add({
        type: 'tb_balance_mismatch',
        account_code: a.code,
        currency: a.currency,
        expected: want.debits - want.credits,
        found: a.debits_posted - a.credits_posted,
        detail: `account ${a.code} of ledger ${a.ledger} (entity ledger ${ledgerParts(a.ledger).tbLedgerId}, ${a.currency}): journal ${want.debits}/${want.credits}, secondary ledger ${a.debits_posted}/${a.credits_posted} (debits/credits)`,
      });
    }
  }
  for (const [key, want] of expected) {
    if (seen.has(key) || (want.debits === 0 && want.credits === 0)) continue;
    f.add({
      type: 'tb_balance_mismatch',
      account_code: want.code,
      currency: want.currency,
      expected: want.debits - want.credits,
      found: 0,
      detail: `account ${want.code} of ledger ${want.ledger} is missing from the secondary ledger`,
    });
  }
}

/**
 * The comparison itself, read-only, in keyset pages: billing → journal (each finalized invoice,
 * payment, credit note and write-off has its entry with the same amount; receivables per invoice
 * = amount_due; customer credit per note = balance), then journal → secondary ledger (each line
 * has its transfer with the same amount and accounts; every account's posted totals equal the
 * journal's). Entries still waiting in the feed's outbox are left out of the second pass.
 */
export async function reconcile(tx: Tx, tenantId: string, entityId: string | null): Promise<{ counts: RunCounts; findings: Findings }> {
  const f = new Findings();
  const counts: RunCounts = { invoices: 0, paidInvoices: 0, payments: 0, creditNotes: 0, entries: 0, transfers: 0, accounts: 0 };
  await forEachPage(
    (after) => invoicePage(tx, tenantId, entityId, after, RECONCILIATION_PAGE),
    (rows) => {
      for (const r of rows) {
        counts.invoices += 1;
        if (r.status === 'paid') counts.paidInvoices += 1;
        checkInvoice(f, r);
      }
    },
  );
  await forEachPage(
    (after) => paymentPage(tx, tenantId, entityId, after, RECONCILIATION_PAGE),
    (rows) => {
      for (const r of rows) {
        counts.payments += 1;
        checkPayment(f, r);
      }
    },
  );
  await forEachPage(
    (after) => creditNotePage(tx, tenantId, entityId, after, RECONCILIATION_PAGE),
    (rows) => {
      for (const r of rows) {
        counts.creditNotes += 1;
        checkCreditNote(f, r);
      }
    },
  );
  await compareEntries(tx, tenantId, entityId, counts, f);
  await compareAccounts(tx, tenantId, entityId, counts, f);
  return { counts, findings: f };
}

/**
 * The run job: catches the secondary ledger up, compares inside one repeatable-read snapshot,
 * then records the outcome, stores the first 1 000 discrepancies and emits
 * `reconciliation.completed` in one transaction. A run that throws is recorded as failed.
 */
export async function executeRun(
  db: Kysely<DB>,
  tenantId: string,
  runId: string,
  now: () => Date,
  catchUp: (tenantId: string) => Promise<unknown>,
): Promise<RunRow | null> {
  const run = await findRun(db, tenantId, runId);
  if (!run || run.status !== 'running') return null;
  try {
    await catchUp(tenantId);
    const { counts, findings } = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((tx) => reconcile(tx, tenantId, run.entity_id));
    return await db.transaction().execute(async (tx) => {
      const ctx: Ctx = { tx, tenantId, now: now() };
      await insertDiscrepancies(
        tx,
        findings.kept.map((d, i) => ({
          tenant_id: tenantId,
          run_id: runId,
          position: i + 1,
          type: d.type,
          invoice_id: d.invoice_id ?? null,
          transaction_id: d.transaction_id ?? null,
          reference_id: d.reference_id ?? null,
          account_code: d.account_code ?? 0,
          currency: d.currency ?? null,
          expected_amount: d.expected,
          found_amount: d.found,
          detail: d.detail,
        })),
      );
      const row = await finishRun(tx, tenantId, runId, {
        status: 'completed',
        completed_at: ctx.now,
        invoices_checked: counts.invoices,
        paid_invoices_checked: counts.paidInvoices,
        payments_checked: counts.payments,
        credit_notes_checked: counts.creditNotes,
        journal_entries_checked: counts.entries,
        tb_compared: true,
        tb_accounts_checked: counts.accounts,
        tb_transfers_checked: counts.transfers,
        total_discrepancies: findings.count,
        discrepancies_truncated: findings.count > findings.kept.length,
      });
      await emitEvent(ctx, 'reconciliation.completed', toRun(row));
      return row;
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await finishRun(db, tenantId, runId, { status: 'failed', completed_at: now(), failure: message.slice(0, 500) });
    return null;
  }
}

/** Records checked by a run (the benchmark's measure). */
export function recordsChecked(row: RunRow): number {
  return [
    row.invoices_checked,
    row.payments_checked,
    row.credit_notes_checked,
    row.journal_entries_checked,
    row.tb_transfers_checked,
    row.tb_accounts_checked,
  ].reduce((a, b) => a + Number(b), 0);
}
