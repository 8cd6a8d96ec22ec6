import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const creditNoteStatus = z.enum(['issued', 'used', 'void', 'pending_approval', 'rejected', 'expired']);

export const creditNoteLineInput = z.object({
  invoice_line_id: z.uuid(),
  amount: fields.positiveMinorUnits().describe('gross (with GST) credited on this line, at most what the line has left'),
});

export const createCreditNoteBody = z
  .object({
    customer_id: z.uuid(),
    invoice_id: z.uuid().optional(),
    amount: fields.positiveMinorUnits().optional().describe('gross; required unless lines are given (then it must equal their sum)'),
    lines: z
      .array(creditNoteLineInput)
      .min(1)
      .max(500)
      .optional()
      .describe('which invoice lines to credit, and how much of each (with invoice_id); omitted: the whole invoice pro rata'),
    currency: fields.currency().optional(),
    reason: fields.text(500).default(''),
    reference: fields.text(100).optional(),
    expires_at: fields.instant().optional(),
    tax_reversal: z
      .boolean()
      .optional()
      .describe(
        'default true. false: a commercial credit — the customer balance changes, output tax does not (no tax reversed, not in GSTR-1, no IRN); the only way to credit a supply after 30 November following its financial year (CGST Act s.34(2))',
      ),
  })
  .superRefine((body, ctx) => {
    if (body.amount === undefined && body.lines === undefined)
      ctx.addIssue({ code: 'custom', path: ['amount'], message: 'amount is required unless lines are given' });
    if (body.lines !== undefined && body.invoice_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['lines'], message: 'lines credit an invoice: give invoice_id' });
  });
export type CreateCreditNoteBody = z.infer<typeof createCreditNoteBody>;

export const applyCreditNoteBody = z.object({
  invoice_id: z.uuid(),
  amount: fields.positiveMinorUnits(),
});

export const listCreditNotesQuery = z.object({
  customer_id: z.uuid().optional(),
  invoice_id: z.uuid().optional(),
  status: creditNoteStatus.optional(),
});

export const expandQuery = z.object({
  expand: z
    .union([z.literal('customer'), z.array(z.literal('customer'))])
    .optional()
    .describe('expand=customer embeds the customer'),
});

/** One credited invoice line (Rule 53(1A)): its own HSN and rate, and the tax reversed at that rate. */
export const creditNoteLineSchema = z
  .object({
    id: z.uuid(),
    invoice_line_id: z.uuid(),
    position: z.int(),
    hsn_code: z.string(),
    tax_rate_bp: z.int(),
    amount: z.int(),
    subtotal: z.int(),
    cgst_amount: z.int(),
    sgst_amount: z.int(),
    igst_amount: z.int(),
    tax_amount: z.int(),
  })
  .meta({ id: 'CreditNoteLine' });

/** SPEC §2 "Credit note", plus number, entity_id and the lifecycle timestamps. */
export const creditNoteSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    customer_id: z.uuid(),
    invoice_id: z.uuid().nullable(),
    entity_id: z.uuid().nullable(),
    number: z.string().nullable(),
    reference: z.string().nullable(),
    amount: z.int(),
    subtotal: z.int(),
    tax_amount: z.int(),
    igst_amount: z.int(),
    cgst_amount: z.int(),
    sgst_amount: z.int(),
    tax_type: z.string(),
    hsn_code: z.string(),
    balance: z.int(),
    currency: z.string(),
    status: creditNoteStatus,
    reason: z.string(),
    type: z.string(),
    refund_status: z.string(),
    tax_reversal: z.boolean().describe('false: a commercial credit that reversed no output tax'),
    exchange_rate: z
      .string()
      .nullable()
      .describe(
        "the entity's functional currency (INR in India) per one unit of the note's currency: its invoice's rate, or the entity's rate of the issue date",
      ),
    inr_subtotal: z.int().nullable(),
    inr_cgst_amount: z.int().nullable(),
    inr_sgst_amount: z.int().nullable(),
    inr_igst_amount: z.int().nullable(),
    inr_tax_amount: z.int().nullable(),
    inr_total: z.int().nullable(),
    expires_at: fields.timestamp().nullable(),
    issued_at: fields.timestamp().nullable(),
    voided_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
    /** The credited invoice lines (empty for a goodwill note); present on the credit-note endpoints. */
    lines: z.array(creditNoteLineSchema).optional(),
    customer: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'CreditNote' });
export type CreditNote = z.infer<typeof creditNoteSchema>;
