import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const einvoiceSchema = z
  .object({
    id: z.uuid(),
    document_type: z.enum(['invoice', 'credit_note']),
    document_id: z.uuid(),
    entity_id: z.uuid(),
    provider: z.string(),
    status: z.enum(['pending', 'generated', 'failed', 'canceled']),
    irn: z.string().nullable(),
    ack_no: z.string().nullable(),
    ack_date: fields.timestamp().nullable(),
    signed_qr_code: z.string().nullable(),
    errors: z.array(z.object({ code: z.string(), message: z.string(), field: z.string().optional() })),
    canceled_at: fields.timestamp().nullable(),
    cancel_reason_code: z.int().nullable(),
    cancel_remarks: z.string().nullable(),
    irn_report_by: z
      .string()
      .nullable()
      .describe(
        "the last day (entity's zone) the IRP accepts the document: 30 days from its date for an entity with turnover of ₹10 crore or more; null otherwise",
      ),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Einvoice' });

export const reportDueQuery = z.object({
  days: z.coerce
    .number()
    .int('must be a whole number of days')
    .min(1, 'must be at least 1')
    .max(30, 'must be at most 30 (the limit itself)')
    .default(7)
    .describe('documents whose last reportable day is at most this many days away (default 7)'),
});

export const reportDueSchema = z
  .object({
    einvoice: einvoiceSchema,
    document_number: z.string().nullable().describe('the invoice or credit note number, as built for the IRP'),
    buyer_name: z.string().nullable(),
    days_left: z.int().describe("days from today (entity's zone) to the last reportable day: 0 on that day"),
  })
  .meta({ id: 'EinvoiceReportDue' });
export type ReportDue = z.infer<typeof reportDueSchema>;

/**
 * Reason codes of the IRP: 1 duplicate, 2 data entry mistake, 3 order cancelled, 4 others —
 * as NIC writes them (`"1"`…`"4"`, a string) or as a number.
 */
export const irnCancelReasonCode = z
  .union([z.int().min(1).max(4), z.enum(['1', '2', '3', '4']).transform(Number)])
  .describe('NIC CnlRsn: 1 duplicate, 2 data entry mistake, 3 order cancelled, 4 others (a number or "1"–"4")');

export const cancelEinvoiceBody = z.object({
  reason_code: irnCancelReasonCode,
  remarks: fields.requiredText(100),
});

/**
 * refresh_buyer (default true): take the customer's current GSTIN, name and address into the
 * document (and the invoice's frozen buyer details) before resubmitting, as long as that leaves
 * the supply unchanged.
 */
export const retryEinvoiceBody = z.object({ refresh_buyer: z.boolean().default(true) }).default({ refresh_buyer: true });
