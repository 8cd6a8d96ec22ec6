import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { getEntity, transactionRate } from '../../modules/entities/index.js';
import {
  applyToInvoice,
  assertTdsAllowed,
  certificateFormOn,
  getInvoiceRow,
  insertTdsCertificate,
  resolveTdsSection,
  TdsSectionError,
  type InvoiceRow,
  type ResolvedTdsSection,
  type TdsCodeEntry,
} from '../../modules/invoices/index.js';
import { Account, postEntry } from '../../modules/ledger/index.js';
import { localDay } from '../../modules/tax/index.js';

export type CertifiedTdsInput = { tds_amount: number; certificate_number?: string; section?: string; deducted_on?: string };

/**
 * The day the customer deducted: as given, else `fallback` (the invoice's issue date, or the payment's
 * day) in the entity's zone — the customer credits the sum when it books the invoice, and
 * s.393(1)(c) deducts at credit or payment, whichever is earlier (docs/decisions/0510).
 */
export function deductionDay(given: string | undefined, fallback: Date, timeZone: string, now: Date): string {
  if (given && given > localDay(now, timeZone)) throw errors.invalidField('deducted_on', 'must not be after today');
  return given ?? localDay(fallback, timeZone);
}

/** The section or payment code as the table resolves it on the day of deduction; a wrong one is a 400 on `section`. */
export function sectionOf(section: string | undefined, deductedOn: string, table: readonly TdsCodeEntry[]): ResolvedTdsSection | null {
  if (section === undefined) return null;
  try {
    return resolveTdsSection(section, deductedOn, table);
  } catch (err) {
    if (err instanceof TdsSectionError) throw errors.invalidField('section', err.message);
    throw err;
  }
}

/**
 * TDS the customer certified after paying the rest (Form 16A, or Form 131 from 1 April 2026, arrives after the cash): it settles
 * its part of the invoice like TDS withheld with a payment — Dr TDS receivable; Cr receivables
 * (docs/ledger.md) — under the same rules (assertTdsAllowed), and the certificate is kept.
 */
/** `tdsCodes`: the operator's TDS code table (KOSH_TDS_CODES, decision 0610). */
export async function recordCertifiedTds(ctx: Ctx, invoiceId: string, input: CertifiedTdsInput, tdsCodes: readonly TdsCodeEntry[] = []): Promise<InvoiceRow> {
  // Locked first, so concurrent payments and TDS on the invoice see each other's effect.
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (invoice.status !== 'open' && invoice.status !== 'uncollectible') {
    throw errors.conflict(`cannot record TDS on an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
  }
  assertTdsAllowed(invoice, input.tds_amount, 'tds_amount');
  if (input.tds_amount > invoice.amount_due) {
    throw errors.invalidField('tds_amount', `exceeds the invoice's outstanding balance of ${invoice.amount_due}`);
  }
  const entity = await getEntity(ctx, invoice.entity_id);
  const deductedOn = deductionDay(input.deducted_on, invoice.issued_at ?? ctx.now, entity.time_zone, ctx.now);
  const section = sectionOf(input.section, deductedOn, tdsCodes);
  const row = await applyToInvoice(ctx, invoice.id, { tds: input.tds_amount });
  const id = newId();
  // The TDS at the certificate's date rate; the receivable leaves at the invoice's (DESIGN §19).
  const rate = await transactionRate(ctx, entity, invoice.currency, null, ctx.now, invoice.exchange_rate);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'invoice.tds_recorded',
    referenceType: 'tds_certificate',
    referenceId: id,
    currency: invoice.currency,
    description: `TDS certified for invoice ${invoice.number}${input.certificate_number ? ` (certificate ${input.certificate_number})` : ''}`,
    rate: rate.rate,
    exchangeDifference: 'realized',
    lines: [
      { account: Account.TDS_RECEIVABLE, debit: input.tds_amount, customerId: invoice.customer_id, invoiceId: invoice.id },
      { account: Account.RECEIVABLES, credit: input.tds_amount, customerId: invoice.customer_id, invoiceId: invoice.id },
    ],
  });
  await insertTdsCertificate(ctx.tx, {
    tenant_id: ctx.tenantId,
    id,
    invoice_id: invoice.id,
    customer_id: invoice.customer_id,
    tds_amount: input.tds_amount,
    certificate_number: input.certificate_number ?? null,
    section: section?.section ?? null,
    deducted_on: deductedOn,
    payment_code: section?.payment_code ?? null,
    certificate_form: section?.certificate_form ?? certificateFormOn(deductedOn),
    created_at: ctx.now,
  });
  return row;
}
