import { sql } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { EntityRow } from './entities.repository.js';

export type DocumentKind = 'invoice' | 'credit_note' | 'quote' | 'receipt_voucher' | 'refund_voucher';

/** Receipt vouchers (CGST Rules, rule 50) and refund vouchers (rule 51): one series each per entity. */
const VOUCHER_PREFIX = { receipt_voucher: 'RV-', refund_voucher: 'RFV-' } as const;

/** GST (Rule 46(b)) allows at most 16 characters in a document number. */
export const MAX_DOCUMENT_NUMBER_LENGTH = 16;
const MIN_SEQUENCE_DIGITS = 6;

export function prefixFor(entity: Pick<EntityRow, 'invoice_prefix' | 'credit_note_prefix' | 'quote_prefix'>, kind: DocumentKind): string {
  if (kind === 'receipt_voucher' || kind === 'refund_voucher') return VOUCHER_PREFIX[kind];
  return kind === 'invoice' ? entity.invoice_prefix : kind === 'credit_note' ? entity.credit_note_prefix : entity.quote_prefix;
}

export function formatDocumentNumber(prefix: string, sequence: number): string {
  const number = `${prefix}${String(sequence).padStart(MIN_SEQUENCE_DIGITS, '0')}`;
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
export async function takeDocumentNumber(ctx: Ctx, entity: EntityRow, kind: DocumentKind): Promise<string> {
  const result = await sql<{ last_value: number }>`
    INSERT INTO document_counters (tenant_id, entity_id, kind, last_value)
    VALUES (${ctx.tenantId}, ${entity.id}, ${kind}, 1)
    ON CONFLICT (tenant_id, entity_id, kind)
    DO UPDATE SET last_value = document_counters.last_value + 1
    RETURNING last_value`.execute(ctx.tx);
  return formatDocumentNumber(prefixFor(entity, kind), Number(result.rows[0]!.last_value));
}

/**
 * Takes the next `count` numbers of an entity's series at once (the billing run finalizes many
 * invoices per transaction), in order. Same rules as takeDocumentNumber: inside the finalizing
 * transaction, every number used by a document of that transaction — a rollback returns them all.
 */
export async function takeDocumentNumbers(ctx: Ctx, entity: EntityRow, kind: DocumentKind, count: number): Promise<string[]> {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
  const result = await sql<{ last_value: number }>`
    INSERT INTO document_counters (tenant_id, entity_id, kind, last_value)
    VALUES (${ctx.tenantId}, ${entity.id}, ${kind}, ${count})
    ON CONFLICT (tenant_id, entity_id, kind)
    DO UPDATE SET last_value = document_counters.last_value + ${count}
    RETURNING last_value`.execute(ctx.tx);
  const last = Number(result.rows[0]!.last_value);
  const prefix = prefixFor(entity, kind);
  return Array.from({ length: count }, (_, i) => formatDocumentNumber(prefix, last - count + 1 + i));
}
