import { sql } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { financialYear } from '../tax/index.js';
import type { EntityRow } from './entities.repository.js';

export type DocumentKind = 'invoice' | 'credit_note' | 'quote' | 'receipt_voucher' | 'refund_voucher' | 'top_up';

/**
 * Receipt vouchers (CGST Rules, rule 50) and refund vouchers (rule 51): one series each per entity.
 * So has the top-up of prepaid credit (decision 0840): it asks for an advance and is no tax
 * invoice, so it takes no number of the invoice series (rule 46(b)).
 */
const FIXED_PREFIX = { receipt_voucher: 'RV-', refund_voucher: 'RFV-', top_up: 'TU-' } as const;

/** GST (Rule 46(b)) allows at most 16 characters in a document number. */
export const MAX_DOCUMENT_NUMBER_LENGTH = 16;
/** Sequence digits: 6, fewer when a long prefix leaves less room (never fewer than 2). */
const SEQUENCE_DIGITS = 6;
export const MIN_SEQUENCE_DIGITS = 2;
/** In a prefix, the financial year of the document's date: `INV/{FY}/` → `INV/25-26/` (decision 0364). */
export const FY_PLACEHOLDER = '{FY}';
/** `{FY}` stands for five characters (`25-26`). */
export const prefixLength = (prefix: string) => prefix.replaceAll(FY_PLACEHOLDER, '25-26').length;

export function prefixFor(entity: Pick<EntityRow, 'invoice_prefix' | 'credit_note_prefix' | 'quote_prefix'>, kind: DocumentKind): string {
  if (kind === 'receipt_voucher' || kind === 'refund_voucher' || kind === 'top_up') return FIXED_PREFIX[kind];
  return kind === 'invoice' ? entity.invoice_prefix : kind === 'credit_note' ? entity.credit_note_prefix : entity.quote_prefix;
}

/** The financial year as a prefix writes it: 2025-26 → `25-26`. */
function shortFinancialYear(fy: string): string {
  return `${fy.slice(2, 4)}-${fy.slice(5, 7)}`;
}

/**
 * The series a document of `kind` dated `at` belongs to: its prefix with `{FY}` written out, and
 * the counter's key (the financial year when the entity's series restart every year, else '').
 */
export function seriesOf(
  entity: Pick<EntityRow, 'invoice_prefix' | 'credit_note_prefix' | 'quote_prefix' | 'number_series_reset' | 'time_zone'>,
  kind: DocumentKind,
  at: Date,
): { prefix: string; counter: string } {
  const fy = financialYear(at, entity.time_zone);
  const yearly = entity.number_series_reset === 'financial_year';
  let template = prefixFor(entity, kind);
  // The credit-note and quote series restart too; their fixed prefixes (CN-, QT-) take the year
  // after them so their numbers stay distinct across years (the invoice prefix must name {FY}).
  if (yearly && !template.includes(FY_PLACEHOLDER)) template = `${template}${FY_PLACEHOLDER}/`;
  const prefix = template.replaceAll(FY_PLACEHOLDER, shortFinancialYear(fy));
  return { prefix, counter: yearly ? fy : '' };
}

export function formatDocumentNumber(prefix: string, sequence: number): string {
  const digits = Math.max(MIN_SEQUENCE_DIGITS, Math.min(SEQUENCE_DIGITS, MAX_DOCUMENT_NUMBER_LENGTH - prefix.length));
  const number = `${prefix}${String(sequence).padStart(digits, '0')}`;
  if (number.length > MAX_DOCUMENT_NUMBER_LENGTH) {
    throw errors.conflict(
      `the ${prefix} series is exhausted: ${number} would exceed ${MAX_DOCUMENT_NUMBER_LENGTH} characters; give the entity a shorter prefix`,
      'number_series_exhausted',
    );
  }
  return number;
}

/**
 * Takes the next number of an entity's series. Call it only when a document is finalized, inside
 * the finalizing transaction: the counter row stays locked until commit (so concurrent
 * finalizations queue up), and a rollback gives the number back — the series has no gaps.
 */
export async function takeDocumentNumber(ctx: Ctx, entity: EntityRow, kind: DocumentKind, dated: Date = ctx.now): Promise<string> {
  return (await takeDocumentNumbers(ctx, entity, kind, 1, dated))[0]!;
}

/**
 * Takes the next `count` numbers of an entity's series at once (the billing run finalizes many
 * invoices per transaction), in order. Same rules as takeDocumentNumber: inside the finalizing
 * transaction, every number used by a document of that transaction — a rollback returns them all.
 */
export async function takeDocumentNumbers(ctx: Ctx, entity: EntityRow, kind: DocumentKind, count: number, dated: Date = ctx.now): Promise<string[]> {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
  // Numbered on the document's date (`dated`: ctx.now, or the first day of the first open period
  // when its month is closed, DESIGN §18): its financial year picks the series, so a document
  // made while March is closed is an April document numbered in April's financial year.
  const { prefix, counter } = seriesOf(entity, kind, dated);
  const result = await sql<{ last_value: number }>`
    INSERT INTO document_counters (tenant_id, entity_id, kind, series, last_value)
    VALUES (${ctx.tenantId}, ${entity.id}, ${kind}, ${counter}, ${count})
    ON CONFLICT (tenant_id, entity_id, kind, series)
    DO UPDATE SET last_value = document_counters.last_value + ${count}
    RETURNING last_value`.execute(ctx.tx);
  const last = Number(result.rows[0]!.last_value);
  return Array.from({ length: count }, (_, i) => formatDocumentNumber(prefix, last - count + 1 + i));
}
