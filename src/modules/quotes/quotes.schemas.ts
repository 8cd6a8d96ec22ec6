import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';

export const quoteStatus = z.enum(['draft', 'accepted', 'declined', 'expired']);

const hsnCode = z.string().regex(/^(\d{4}|\d{6}|\d{8})$/, 'must be a 4, 6 or 8 digit HSN/SAC code');

/**
 * SPEC 4.5 gives two line shapes: `unit_price` (formal) or `unit_amount` (worked example); either
 * is accepted (both must agree if both are sent). `amount` is computed by the server; when a
 * client sends one it must equal quantity × unit price.
 */
const lineInput = z
  .object({
    description: fields.requiredText(500),
    quantity: z.int({ message: 'must be a whole number' }).min(1).max(1_000_000),
    unit_price: fields.minorUnits().optional(),
    unit_amount: fields.minorUnits().optional(),
    amount: fields.minorUnits().optional(),
    hsn_code: hsnCode.optional(),
  })
  .superRefine((line, ctx) => {
    const unit = line.unit_amount ?? line.unit_price;
    if (unit === undefined) {
      ctx.addIssue({ code: 'custom', path: ['unit_amount'], message: 'unit_amount (or unit_price) is required' });
      return;
    }
    if (line.unit_amount !== undefined && line.unit_price !== undefined && line.unit_amount !== line.unit_price) {
      ctx.addIssue({ code: 'custom', path: ['unit_price'], message: 'unit_price and unit_amount disagree' });
    }
    if (!Number.isSafeInteger(unit * line.quantity)) {
      ctx.addIssue({ code: 'custom', path: ['amount'], message: 'quantity × unit price is too large' });
    } else if (line.amount !== undefined && line.amount !== unit * line.quantity) {
      ctx.addIssue({ code: 'custom', path: ['amount'], message: `must equal quantity × unit price (${unit * line.quantity}) or be left out` });
    }
  });

/** SPEC 4.5, both descriptions: `valid_until` or `expires_at`. */
export const createQuoteBody = z
  .object({
    customer_id: z.uuid(),
    entity_id: z.uuid().optional().describe('issuing legal entity (its quote series); default the primary entity'),
    line_items: z.array(lineInput).min(1).max(500),
    currency: fields.currency().optional().describe("default the tenant's base currency"),
    valid_until: fields.instant().optional(),
    expires_at: fields.instant().optional().describe('same as valid_until'),
    notes: fields.text(5000).default(''),
    terms: fields.text(5000).default(''),
    tax_amount: fields.minorUnits().optional().describe('when left out, GST is computed as for the invoice acceptance creates'),
    discount_amount: fields.minorUnits().default(0),
  })
  .superRefine((body, ctx) => {
    if (body.valid_until && body.expires_at && Date.parse(body.valid_until) !== Date.parse(body.expires_at)) {
      ctx.addIssue({ code: 'custom', path: ['expires_at'], message: 'valid_until and expires_at disagree' });
    }
  })
  .meta(
    bodyExample({
      customer_id: '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77',
      line_items: [{ description: 'Implementation services', quantity: 2, unit_amount: 1500000, hsn_code: '998314' }],
      currency: 'INR',
      valid_until: '2026-04-30T23:59:59.000Z',
      notes: 'Valid for 30 days',
    }),
  );
export type CreateQuoteBody = z.infer<typeof createQuoteBody>;

export const listQuotesQuery = z.object({
  status: quoteStatus.optional(),
  customer_id: z.uuid().optional(),
});

export const quoteLineSchema = z.object({
  description: z.string(),
  quantity: z.int(),
  unit_price: z.int(),
  unit_amount: z.int(),
  amount: z.int().describe('quantity × unit price'),
  discount_amount: z.int().describe("this line's share of the quote discount"),
  hsn_code: z.string().nullable(),
});

/** SPEC §2 "Quote" (both field names for the validity), plus entity_id, tax_computed and expired_at. */
export const quoteSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    customer_id: z.uuid(),
    entity_id: z.uuid(),
    quote_number: z.string(),
    status: quoteStatus,
    line_items: z.array(quoteLineSchema),
    subtotal: z.int(),
    discount_amount: z.int(),
    tax_amount: z.int(),
    tax_computed: z.boolean().describe('true when tax_amount is the GST Kosh computed; false when the caller gave it'),
    total: z.int().describe('subtotal − discount_amount + tax_amount'),
    currency: z.string(),
    valid_until: fields.timestamp().nullable(),
    expires_at: fields.timestamp().nullable(),
    notes: z.string(),
    terms: z.string(),
    invoice_id: z.uuid().nullable(),
    accepted_at: fields.timestamp().nullable(),
    declined_at: fields.timestamp().nullable(),
    expired_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Quote' });
export type Quote = z.infer<typeof quoteSchema>;
