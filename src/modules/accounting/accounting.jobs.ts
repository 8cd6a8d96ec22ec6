import { createHash } from 'node:crypto';
import type { ReadCtx } from '../../platform/context.js';
import { emitEvent } from '../../platform/events/events.js';
import { RetryJobAt, type JobHandler, type JobEnv } from '../../platform/jobs/jobs.js';
import { newId } from '../../platform/ids.js';
import { failedRefundRowsAmong, sourcesOfRefunds, succeededRefundRows, type RefundRow } from '../collections/index.js';
import { listCreditNotes, type CreditNote } from '../credit-notes/index.js';
import { customerCountry, customerStateCode, listCustomers, type Customer } from '../customers/index.js';
import { listInvoices, type Invoice } from '../invoices/index.js';
import { listPayments, type Payment } from '../payments/index.js';
import {
  bookedRefundRecords,
  findConnection,
  markCreateStarted,
  purgeOAuthStates,
  releaseSyncLease,
  saveSyncRecord,
  syncRecordsOf,
  takeSyncLease,
  updateConnection,
  updateSyncRun,
  type ConnectionRow,
  type SyncRecordRow,
} from './accounting.repository.js';
import { effectiveMapping, toConnection } from './accounting.service.js';
import { transitionConnection } from './accounting.states.js';
import type { SyncRecordStatus, SyncRecordType, TaxMapping } from './accounting.tables.js';
import { INDIA_TIME, zoneOf } from './dates.js';
import { localDay } from '../tax/index.js';
import { ProviderError } from './providers/http.js';
import { adapters } from './providers/index.js';
import type {
  AccountingAdapter,
  CreditNoteDoc,
  CustomerDoc,
  ExternalRef,
  InvoiceDoc,
  PaymentDoc,
  ProviderSession,
  RefundDoc,
  ResolvedRefs,
  SyncDoc,
  TaxedLine,
} from './providers/provider.js';
import { accessTokenFor, ConnectionPaused, refreshTokenOf } from './tokens.js';

const PAGE = { limit: 200 };
/** Longer than a run takes between two records; a crashed worker's lease lapses after it. */
const SYNC_LEASE_MS = 10 * 60_000;
const SYNC_BUSY_RETRY_MS = 30_000;
/** Rates a GST credit note's tax can be (bp); a note's rate is read back from its amounts. */
const GST_RATES_BP = [0, 25, 300, 500, 1200, 1800, 2800, 4000];

function day(iso: string | null, zone = INDIA_TIME): string | null {
  return iso ? localDay(new Date(iso), zone) : null;
}

/** A stable key per version of a record: providers' idempotency keys (QuickBooks requestid, Xero Idempotency-Key). */
function idempotencyKey(recordType: string, recordId: string, hash: string): string {
  const h = createHash('sha256').update(`${recordType}:${recordId}:${hash}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function hashOf(item: SyncDoc, mapping: TaxMapping): string {
  return createHash('sha256').update(JSON.stringify({ item, mapping })).digest('hex');
}

function customerDoc(c: Customer): CustomerDoc {
  return {
    id: c.id,
    name: c.name ?? c.email,
    email: c.email,
    phone: c.phone,
    gstin: c.gstin,
    place_of_supply: customerStateCode(c),
    country: customerCountry(c),
    address: c.billing_address,
  };
}

function invoiceLines(invoice: Invoice): TaxedLine[] {
  // A discounted line is sent as one unit at its net taxable value (the books' quantity × rate must
  // equal the taxable value Kosh taxed), the discount named in the description.
  return invoice.lines.map((l) => ({
    description: l.discount_amount ? `${l.description} (${l.quantity} × ${l.unit_amount}, less ${l.discount_amount} discount)` : l.description,
    quantity: l.discount_amount ? 1 : l.quantity,
    unit_amount: l.discount_amount ? l.amount : l.unit_amount,
    amount: l.amount,
    hsn_code: l.hsn_code,
    rate_bp: l.tax_rate_bp,
    cgst_amount: l.cgst_amount,
    sgst_amount: l.sgst_amount,
    igst_amount: l.igst_amount,
    tax_amount: l.tax_amount,
  }));
}

function creditNoteLine(note: CreditNote): TaxedLine {
  const taxed = note.subtotal > 0;
  const net = taxed ? note.subtotal : note.amount;
  const measured = taxed ? (note.tax_amount * 10_000) / note.subtotal : 0;
  const rate = GST_RATES_BP.reduce((best, r) => (Math.abs(r - measured) < Math.abs(best - measured) ? r : best), 0);
  return {
    description: note.reason || `Credit note ${note.number}`,
    quantity: 1,
    unit_amount: net,
    amount: net,
    hsn_code: note.hsn_code,
    rate_bp: taxed ? rate : 0,
    cgst_amount: note.cgst_amount,
    sgst_amount: note.sgst_amount,
    igst_amount: note.igst_amount,
    tax_amount: note.tax_amount,
  };
}

type Counts = { synced: number; failed: number; skipped: number };

/** One sync attempt of one connection: the run's state lives in the database, so a retry resumes. */
class SyncPass {
  readonly counts: Counts = { synced: 0, failed: 0, skipped: 0 };
  /** Kosh id → provider id, per record type, as pushed or found in the map. */
  private readonly external = new Map<string, string>();
  private readonly invoiceNumbers = new Map<string, string>();
  /** The book-date zone of each invoice (its supplier's), which its payments and notes share. */
  private readonly invoiceZones = new Map<string, string>();
  private readonly customers = new Map<string, CustomerDoc>();
  /** Every credit note met, pushed or not: a refund carries its note's lines. */
  private readonly notes = new Map<string, CreditNoteDoc>();

  constructor(
    private readonly env: JobEnv,
    private readonly connection: ConnectionRow,
    private readonly adapter: AccountingAdapter,
    private readonly session: ProviderSession,
    private readonly refs: ResolvedRefs,
    private readonly mapping: TaxMapping,
  ) {}

  private get ctx(): ReadCtx {
    return { tx: this.env.db, tenantId: this.connection.tenant_id, now: this.env.clock.now() };
  }

  async run(): Promise<void> {
    await this.pages(
      (page) => listCustomers(this.ctx, {}, page).then((r) => ({ items: r.customers, total: r.total })),
      (batch) =>
        this.pushAll(
          'customer',
          batch.map((c) => {
            const doc = customerDoc(c);
            this.customers.set(c.id, doc);
            return { type: 'customer' as const, doc };
          }),
        ),
    );
    await this.pages(
      (page) => listInvoices(this.ctx, { statuses: ['open', 'paid', 'uncollectible'] }, page).then((r) => ({ items: r.invoices, total: r.total })),
      async (batch) => {
        const items: SyncDoc[] = [];
        for (const inv of batch) {
          if (!inv.number) continue;
          this.invoiceNumbers.set(inv.id, inv.number);
          const zone = zoneOf(inv.supplier);
          this.invoiceZones.set(inv.id, zone);
          const customer = this.customers.get(inv.customer_id);
          const doc: InvoiceDoc = {
            id: inv.id,
            number: inv.number,
            customer_external_id: this.external.get(`customer:${inv.customer_id}`) ?? '',
            date: day(inv.issued_at, zone) ?? day(inv.created_at, zone)!,
            due_date: day(inv.due_date, zone),
            currency: inv.currency,
            tax_type: inv.tax_type,
            place_of_supply: inv.place_of_supply,
            customer_gstin: customer?.gstin ?? inv.customer_details?.gstin ?? null,
            lines: invoiceLines(inv),
            subtotal: inv.subtotal,
            tax_amount: inv.tax_amount,
            total: inv.total,
          };
          items.push({ type: 'invoice', doc });
        }
        await this.pushAll('invoice', items);
      },
    );
    await this.pages(
      (page) => listPayments(this.ctx, {}, page).then((r) => ({ items: r.payments, total: r.total })),
      async (batch: Payment[]) => {
        const payments: SyncDoc[] = [];
        const tds: SyncDoc[] = [];
        for (const p of batch) {
          // Payments without an invoice are customer advances: not synced (no document to settle).
          if (!p.invoice_id) continue;
          const doc: PaymentDoc = {
            id: p.id,
            customer_external_id: this.external.get(`customer:${p.customer_id}`) ?? '',
            invoice_external_id: this.external.get(`invoice:${p.invoice_id}`) ?? '',
            date: day(p.recorded_at, this.invoiceZones.get(p.invoice_id))!,
            currency: p.currency,
            amount: p.amount,
            tds_amount: p.tds_amount,
            reference: p.reference_number || p.id.slice(0, 18),
          };
          if (p.amount > 0) payments.push({ type: 'payment', doc });
          if (p.tds_amount > 0 && this.adapter.recordTypes.includes('payment_tds')) tds.push({ type: 'payment_tds', doc });
          else if (p.tds_amount > 0 && p.amount === 0) payments.push({ type: 'payment', doc });
        }
        await this.pushAll('payment', payments);
        await this.pushAll('payment_tds', tds);
      },
    );
    const held: SyncDoc[] = [];
    await this.pages(
      (page) => listCreditNotes(this.ctx, {}, page).then((r) => ({ items: r.notes, total: r.total })),
      async (batch: CreditNote[]) => {
        const items: SyncDoc[] = [];
        for (const n of batch) {
          if (!n.number || !['issued', 'used', 'expired'].includes(n.status)) continue;
          const customer = this.customers.get(n.customer_id);
          const doc: CreditNoteDoc = {
            id: n.id,
            number: n.number,
            customer_external_id: this.external.get(`customer:${n.customer_id}`) ?? '',
            invoice_number: n.invoice_id ? (this.invoiceNumbers.get(n.invoice_id) ?? null) : null,
            date: day(n.issued_at, n.invoice_id ? this.invoiceZones.get(n.invoice_id) : undefined) ?? day(n.created_at)!,
            currency: n.currency,
            tax_type: n.tax_type,
            place_of_supply: customer?.place_of_supply ?? null,
            customer_gstin: customer?.gstin ?? null,
            reason: n.reason,
            line: creditNoteLine(n),
            total: n.amount,
          };
          this.notes.set(n.id, doc);
          // QuickBooks books a refund note with its refund, as one RefundReceipt; only a note
          // whose refund failed (spendable credit again) is a CreditMemo of its own — pushed once
          // a RefundReceipt booked for it is deleted, never beside it (income reversed twice).
          if (this.adapter.refundAs === 'receipt' && n.type === 'refund') {
            if (n.refund_status === 'refund_failed') held.push({ type: 'credit_note', doc });
            continue;
          }
          items.push({ type: 'credit_note', doc });
        }
        await this.pushAll('credit_note', items);
      },
    );
    // Refunds that went through (the money left): pending ones wait, failed ones are credit.
    for (let after: { created_at: Date; id: string } | null = null; ;) {
      const rows = await succeededRefundRows(this.env.db, this.connection.tenant_id, after, PAGE.limit);
      const docs = await this.refundDocs(rows);
      await this.pushAll(
        'refund',
        docs.map((doc) => ({ type: 'refund' as const, doc })),
      );
      if (rows.length < PAGE.limit) break;
      const last = rows[rows.length - 1]!;
      after = { created_at: last.created_at, id: last.id };
    }
    const stillBooked = await this.voidFailedRefunds();
    await this.pushAll(
      'credit_note',
      held.filter((item) => !stillBooked.has(item.doc.id)),
    );
  }

  /** The refunds as the provider books them; a refund whose note was not met (unnumbered, or an advance's) is left out. */
  private async refundDocs(rows: RefundRow[]): Promise<RefundDoc[]> {
    // A refund that paid out notes' balances (it issued none) books against those notes.
    const sources = await sourcesOfRefunds(
      this.env.db,
      this.connection.tenant_id,
      rows.filter((r) => !r.issued_credit_note).map((r) => r.id),
    );
    const docs: RefundDoc[] = [];
    for (const r of rows) {
      // An advance's refund pays back a receipt, not a credit note: it is not synced as a refund.
      const note = r.credit_note_id ? this.notes.get(r.credit_note_id) : undefined;
      if (!note) continue; // a refund note is issued with its refund; not met only if unnumbered
      const paysOut = sources
        .filter((x) => x.refund_id === r.id)
        .map((x) => ({ credit_note_id: x.credit_note_id, external_id: this.external.get(`credit_note:${x.credit_note_id}`) ?? '', amount: x.amount }));
      docs.push({
        id: r.id,
        customer_external_id: note.customer_external_id,
        credit_note_external_id: this.external.get(`credit_note:${r.credit_note_id}`) ?? '',
        date: day((r.paid_at ?? r.updated_at).toISOString(), r.invoice_id ? this.invoiceZones.get(r.invoice_id) : undefined)!,
        currency: r.currency,
        amount: r.amount,
        reference: r.gateway_refund_id ?? r.id,
        note,
        ...(paysOut.length > 0 ? { pays_out: paysOut } : {}),
      });
    }
    return docs;
  }

  /**
   * Refunds booked at the provider that failed since (the gateway took a paid refund back): their
   * documents are deleted there (decision 0860), so the books hold the notes' credit as Kosh does,
   * not money that never reached the customer. A refund that failed before it was booked is never
   * listed for a push, so it is never created.
   */
  private async voidFailedRefunds(): Promise<Set<string>> {
    /** The notes of failed refunds whose document the provider still holds (it refused the delete). */
    const stillBooked = new Set<string>();
    for (let after: string | null = null; ;) {
      const records = await bookedRefundRecords(this.env.db, this.connection.tenant_id, this.connection.id, after, PAGE.limit);
      const failed = await failedRefundRowsAmong(
        this.env.db,
        this.connection.tenant_id,
        records.map((r) => r.record_id),
      );
      const docs = new Map((await this.refundDocs(failed)).map((d) => [d.id, d]));
      for (const record of records) {
        const doc = docs.get(record.record_id);
        if (doc && !(await this.voidOne(record, doc))) stillBooked.add(doc.note.id);
      }
      if (records.length < PAGE.limit) return stillBooked;
      after = records[records.length - 1]!.record_id;
    }
  }

  /** Deletes one failed refund's document at the provider; false when the provider refused. */
  private async voidOne(known: SyncRecordRow, doc: RefundDoc): Promise<boolean> {
    const now = this.env.clock.now();
    const record = (status: SyncRecordStatus, ref: ExternalRef | null, error: string | null) =>
      saveSyncRecord(this.env.db, {
        ...known,
        external_id: ref?.external_id ?? null,
        external_version: ref?.external_version ?? null,
        status,
        last_error: error,
        create_started_at: status === 'voided' ? null : known.create_started_at,
        updated_at: now,
      });
    let existing: ExternalRef | null = known.external_id ? { external_id: known.external_id, external_version: known.external_version } : null;
    try {
      // A create whose outcome was never recorded (Zoho Books): find what it made, if anything.
      if (!existing && this.adapter.findExisting) existing = await this.adapter.findExisting(this.session, { type: 'refund', doc }, this.refs);
      if (existing) await this.adapter.voidRefund(this.session, doc, existing, idempotencyKey('refund_void', doc.id, existing.external_id));
      await record('voided', existing, null);
      this.counts.synced += 1;
      return true;
    } catch (error) {
      const message = `${this.connection.provider}: ${(error as Error).message}`.slice(0, 2000);
      if (error instanceof ProviderError && (error.kind === 'rate_limited' || error.kind === 'unavailable' || error.kind === 'unauthorized')) {
        // Transient: the record waits as it was (its document still booked) for the next attempt.
        await record(known.status, existing, message);
        throw error;
      }
      // The provider refused to delete it: the refund stays booked there; the next run tries again.
      await record('failed', existing, message);
      this.counts.failed += 1;
      return false;
    }
  }

  private async pages<T>(
    fetchPage: (page: { limit: number; page: number; offset: number }) => Promise<{ items: T[]; total: number }>,
    handle: (batch: T[]) => Promise<void>,
  ): Promise<void> {
    for (let n = 1; ; n++) {
      const { items, total } = await fetchPage({ limit: PAGE.limit, page: n, offset: (n - 1) * PAGE.limit });
      await handle(items);
      if (n * PAGE.limit >= total || items.length === 0) return;
    }
  }

  private async pushAll(type: SyncRecordType, items: SyncDoc[]): Promise<void> {
    if (items.length === 0) return;
    const known = new Map<string, SyncRecordRow>(
      (
        await syncRecordsOf(
          this.env.db,
          this.connection.tenant_id,
          this.connection.id,
          type,
          items.map((i) => i.doc.id),
        )
      ).map((r) => [r.record_id, r]),
    );
    for (const item of items) await this.pushOne(type, item, known.get(item.doc.id));
  }

  private async pushOne(type: SyncRecordType, item: SyncDoc, known: SyncRecordRow | undefined): Promise<void> {
    const hash = hashOf(item, this.mapping);
    let existing: ExternalRef | null = known?.external_id ? { external_id: known.external_id, external_version: known.external_version } : null;
    if (known?.status === 'synced' && known.payload_hash === hash && existing) {
      this.external.set(`${type}:${item.doc.id}`, existing.external_id);
      this.counts.skipped += 1;
      return;
    }
    const now = this.env.clock.now();
    const record = (status: 'synced' | 'failed' | 'pending', ref: ExternalRef | null, error: string | null) =>
      saveSyncRecord(this.env.db, {
        tenant_id: this.connection.tenant_id,
        id: known?.id ?? newId(),
        connection_id: this.connection.id,
        record_type: type,
        record_id: item.doc.id,
        external_id: ref?.external_id ?? null,
        external_version: ref?.external_version ?? null,
        // Only a push the provider accepted moves the hash: anything else is pushed again next run.
        payload_hash: status === 'synced' ? hash : (known?.payload_hash ?? null),
        status,
        last_error: error,
        attempts: 1,
        // A definitive answer (created, or refused: nothing made) settles a create in flight;
        // a transient failure leaves it open for the next attempt to look up.
        create_started_at: status === 'pending' ? (startedAt ?? known?.create_started_at ?? null) : null,
        synced_at: status === 'synced' ? now : (known?.synced_at ?? null),
        created_at: now,
        updated_at: now,
      });
    let startedAt: Date | null = null;
    const missing = this.missingDependency(item);
    if (missing) {
      await record('failed', existing, missing);
      this.counts.failed += 1;
      return;
    }
    try {
      const findExisting = this.adapter.findExisting;
      if (!existing && findExisting) {
        // No idempotency key at this provider (Zoho Books): an earlier create whose outcome was
        // never recorded (a lost answer, a crash) may have made the record — find it first.
        if (known?.create_started_at) existing = await findExisting(this.session, item, this.refs);
        if (!existing) {
          startedAt = now;
          await markCreateStarted(this.env.db, {
            tenant_id: this.connection.tenant_id,
            id: known?.id ?? newId(),
            connection_id: this.connection.id,
            record_type: type,
            record_id: item.doc.id,
            status: 'pending',
            create_started_at: now,
            created_at: now,
            updated_at: now,
          });
        }
      }
      const ref = await this.adapter.push(this.session, item, this.refs, existing, idempotencyKey(type, item.doc.id, hash));
      await record('synced', ref, null);
      this.external.set(`${type}:${item.doc.id}`, ref.external_id);
      this.counts.synced += 1;
    } catch (error) {
      if (error instanceof ProviderError && (error.kind === 'rate_limited' || error.kind === 'unavailable' || error.kind === 'unauthorized')) {
        // Transient: the record (and the provider's id, if it has one) waits for the next attempt.
        await record('pending', existing, `${this.connection.provider}: ${error.message}`);
        throw error;
      }
      // The provider refused this record (validation, a missing tax mapping): record it and go on.
      await record('failed', existing, `${error instanceof ProviderError ? `${this.connection.provider}: ` : ''}${(error as Error).message}`.slice(0, 2000));
      this.counts.failed += 1;
    }
  }

  private missingDependency(item: SyncDoc): string | null {
    if (item.type === 'customer') return null;
    if (!item.doc.customer_external_id) return 'the customer is not synced yet (see its own sync record)';
    if ((item.type === 'payment' || item.type === 'payment_tds') && !item.doc.invoice_external_id)
      return 'the invoice is not synced yet (see its own sync record)';
    if (item.type === 'refund' && this.adapter.refundAs === 'credit_note' && !item.doc.credit_note_external_id)
      return 'the refund credit note is not synced yet (see its own sync record)';
    if (item.type === 'refund' && item.doc.pays_out?.some((n) => !n.external_id))
      return 'a credit note whose balance it paid out is not synced yet (see its own sync record)';
    return null;
  }
}

/**
 * `accounting.sync`: pushes customers, invoices, payments (TDS separately where the provider
 * books it so) and credit notes to one connection, skipping records whose last pushed version is
 * unchanged. A 429 reschedules the job at the provider's Retry-After; a refused refresh token
 * pauses it (connection `reconnect_required`); records the provider refuses are marked failed
 * with the provider's message and the run goes on.
 */
export const runSync: JobHandler = async (job, env) => {
  const tenantId = job.tenant_id!;
  const { connection_id: connectionId, run_id: runId } = job.payload as { connection_id: string; run_id: string };
  const now = env.clock.now();
  const connection = await findConnection(env.db, tenantId, connectionId);
  if (!connection) return; // disconnected since: the run went with it
  const finish = (patch: Parameters<typeof updateSyncRun>[3]) => updateSyncRun(env.db, tenantId, runId, { ...patch, updated_at: env.clock.now() });
  if (connection.status !== 'active') return finish({ status: 'paused', last_error: `the connection is ${connection.status}`, finished_at: now });
  // Another run of this connection is pushing: wait for it rather than race it to create records.
  if (!(await takeSyncLease(env.db, tenantId, connectionId, now, new Date(now.getTime() + SYNC_LEASE_MS)))) {
    throw new RetryJobAt(new Date(now.getTime() + SYNC_BUSY_RETRY_MS), 'another sync of this connection is running');
  }
  try {
    await syncConnection(env, connection, runId, finish);
  } finally {
    await releaseSyncLease(env.db, tenantId, connectionId);
  }
};

type Finish = (patch: Parameters<typeof updateSyncRun>[3]) => Promise<void>;

async function syncConnection(env: JobEnv, connection: ConnectionRow, runId: string, finish: Finish): Promise<void> {
  const { tenant_id: tenantId, id: connectionId } = connection;
  const now = env.clock.now();
  await finish({ status: 'running', started_at: now });

  const adapter = adapters[connection.provider];
  const mapping = effectiveMapping(connection.provider, connection.tax_mapping);
  let pass: SyncPass | undefined;
  try {
    const accessToken = await accessTokenFor(env, connection);
    const session: ProviderSession = {
      config: env.config.accounting[connection.provider],
      accessToken,
      externalTenantId: connection.external_tenant_id,
      nowMs: now.getTime(),
    };
    const refs = await adapter.resolveRefs(session, mapping);
    pass = new SyncPass(env, connection, adapter, session, refs, mapping);
    await pass.run();
  } catch (error) {
    const counts = pass?.counts;
    if (error instanceof ConnectionPaused) return finish({ status: 'paused', last_error: error.message, finished_at: env.clock.now(), ...(counts ?? {}) });
    if (error instanceof RetryJobAt) {
      await finish({ status: 'rate_limited', last_error: error.message });
      throw error;
    }
    if (error instanceof ProviderError && error.kind === 'rate_limited') {
      await finish({ status: 'rate_limited', last_error: `${connection.provider}: ${error.message}`, ...(counts ?? {}) });
      throw new RetryJobAt(new Date(env.clock.now().getTime() + (error.retryAfterMs ?? 60_000)), `rate limited by ${connection.provider}`);
    }
    if (error instanceof ProviderError && error.kind === 'unauthorized') {
      await env.db.transaction().execute(async (tx) => {
        const row = await transitionConnection(tx, tenantId, connectionId, 'access_refused', {
          last_error: `${connection.provider}: ${error.message}`.slice(0, 1000),
          updated_at: env.clock.now(),
        });
        if (row) await emitEvent({ tx, tenantId, now: env.clock.now() }, 'accounting.connection_failed', { ...toConnection(row), reason: 'access_refused' });
      });
      return finish({ status: 'failed', last_error: `${connection.provider}: ${error.message}`, finished_at: env.clock.now(), ...(counts ?? {}) });
    }
    await finish({ status: 'running', last_error: error instanceof Error ? error.message.slice(0, 2000) : String(error) });
    throw error;
  }
  await finish({ status: 'succeeded', last_error: null, finished_at: env.clock.now(), ...pass.counts });
  await updateConnection(env.db, tenantId, connectionId, { last_synced_at: env.clock.now(), updated_at: env.clock.now() });
}

/** `accounting.purge_oauth_states` (hourly): forgets connect flows that ended more than a day ago. */
export const purgeStates: JobHandler = async (_job, env) => {
  await purgeOAuthStates(env.db, new Date(env.clock.now().getTime() - 86_400_000));
};

/** `accounting.revoke_token`: tells the provider to forget the disconnected connection's token. */
export const revokeToken: JobHandler = async (job, env) => {
  const {
    connection_id: connectionId,
    provider,
    tokens_sealed: sealed,
  } = job.payload as { connection_id: string; provider: keyof typeof adapters; tokens_sealed: string };
  const refreshToken = refreshTokenOf(env, job.tenant_id!, connectionId, sealed);
  try {
    await adapters[provider].revoke(env.config.accounting[provider], refreshToken, env.clock.now().getTime());
  } catch (error) {
    // Already revoked or expired at the provider: nothing left to revoke.
    if (error instanceof ProviderError && (error.kind === 'invalid' || error.kind === 'not_found' || error.kind === 'unauthorized')) return;
    throw error;
  }
};
