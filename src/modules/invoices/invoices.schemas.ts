import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';
import { isGstStateCode } from '../tax/index.js';
import { exchangeRateField } from '../entities/index.js';

export const invoiceStatus = z.enum(['draft', 'open', 'paid', 'void', 'uncollectible']);

const lineInput = z
  .object({
    description: fields.requiredText(500).optional(),
    quantity: z.int().min(1).max(1_000_000).default(1),
    unit_amount: fields.minorUnits().optional(),
    hsn_code: z
      .string()
      .regex(/^(\d{4}|\d{6}|\d{8})$/, 'must be a 4, 6 or 8 digit HSN/SAC code')
      .optional(),
    tax_rate_bp: z
      .int()
      .min(0)
      .max(10_000)
      .optional()
      .describe("the GST rate in basis points (1800 = 18 %); required when the code's rate depends on more than the code"),
    plan_id: z.uuid().optional(),
  })
  .superRefine((line, ctx) => {
    if (line.plan_id === undefined) {
      if (line.unit_amount === undefined) ctx.addIssue({ code: 'custom', path: ['unit_amount'], message: 'unit_amount is required (or give plan_id)' });
      if (line.description === undefined) ctx.addIssue({ code: 'custom', path: ['description'], message: 'description is required (or give plan_id)' });
    }
  });
export type InvoiceLineInput = z.infer<typeof lineInput>;

export const createInvoiceBody = z.object({
  customer_id: z.uuid(),
  currency: fields
    .currency()
    .optional()
    .describe("ISO 4217; defaults to the invoicing entity's currency (INR for an Indian entity, else the tenant's base currency)"),
  entity_id: z.uuid().optional(),
  due_date: fields.instant().optional(),
  lines: z.array(lineInput).min(1).max(500),
  exchange_rate: exchangeRateField()
    .optional()
    .describe('INR per one unit of the currency, a decimal string ("83.2575"); defaults to the entity rate in force'),
  auto_finalize: z.boolean().default(true),
  collection_method: z.enum(['send_invoice', 'charge_automatically']).default('send_invoice'),
  memo: fields.text(1000).optional(),
  metadata: fields.metadata().default({}),
  coupon: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe("a coupon's id or code: its discount lowers the lines' taxable value before GST (plan-restricted coupons: only those plans' lines)"),
  include_pending_charges: z
    .boolean()
    .default(true)
    .describe("take the customer's pending one-off charges in this currency (not those waiting for a subscription) as lines of their own"),
});
export type CreateInvoiceRequest = z.infer<typeof createInvoiceBody>;
/** A create request with its currency decided (defaultInvoiceCurrency). */
export type CreateInvoiceBody = CreateInvoiceRequest & { currency: string };

export const recordTdsBody = z.object({
  tds_amount: fields.positiveMinorUnits(),
  certificate_number: fields.text(100).optional().describe('the certificate number: Form 131 from 1 April 2026, Form 16A before'),
  section: fields
    .text(20)
    .optional()
    .describe(
      "deducted under: from 1 April 2026 the Income-tax Act 2025's s.393 payment code (1001–1092, e.g. 1026 technical services, 1027 professional fees); before, the 1961 Act's section (194C, 194H, 194-I(a), 194-I(b), 194J, 194J(a), 194J(b)). docs/decisions/0510",
    ),
  deducted_on: z.iso.date().optional().describe("the day (in India) the customer credited or paid the sum it deducted from; default: the invoice's issue date"),
});

/**
 * An export's shipping bill as the GSTN offline tool validates it: port code 1–6 letters or digits,
 * bill number 3–7 digits, its date (decision 0610).
 */
export const shippingBillSchema = z
  .object({
    port_code: z
      .string()
      .regex(/^[A-Za-z0-9]{1,6}$/, 'must be 1–6 letters or digits, e.g. INBOM4')
      .transform((v) => v.toUpperCase()),
    number: z.string().regex(/^[0-9]{3,7}$/, 'must be 3–7 digits'),
    date: z.iso.date().describe('the shipping bill date (YYYY-MM-DD)'),
  })
  .meta({ id: 'ShippingBill' });

/**
 * POST /v1/invoices/{id}/gst-details (decision 0610): corrections of an issued invoice's GST
 * particulars that leave its tax as it was — the place of supply of a small inter-state invoice to
 * an unregistered person (to another state; B2CS), an export's shipping bill.
 */
export const correctGstDetailsBody = z
  .object({
    place_of_supply: z
      .string()
      .refine(isGstStateCode, 'must be a two-digit GST state code such as "27"')
      .optional()
      .describe('the corrected place of supply of an inter-state invoice to an unregistered person (B2CS): another state, so IGST stays IGST'),
    shipping_bill: shippingBillSchema.optional().describe("an export invoice's shipping bill"),
  })
  .refine((b) => b.place_of_supply !== undefined || b.shipping_bill !== undefined, { message: 'give place_of_supply or shipping_bill' })
  .meta(bodyExample({ shipping_bill: { port_code: 'INBOM4', number: '1234567', date: '2026-06-20' } }));
export type CorrectGstDetailsBody = z.infer<typeof correctGstDetailsBody>;

export const listInvoicesQuery = z.object({
  q: z.string().trim().min(1).max(100).optional().describe('search: a part of the invoice number (case-insensitive)'),
  status: invoiceStatus.optional(),
  customer_id: z.uuid().optional(),
  entity_id: z.uuid().optional(),
  subscription_id: z.uuid().optional(),
});

export const invoiceLineSchema = z
  .object({
    id: z.uuid(),
    position: z.int(),
    description: z.string(),
    quantity: z.int(),
    unit_amount: z.int(),
    discount_amount: z.int().describe('taken off quantity × unit_amount before GST'),
    amount: z.int().describe('the taxable value: quantity × unit_amount − discount_amount'),
    hsn_code: z.string(),
    tax_rate_bp: z.int(),
    cgst_amount: z.int(),
    sgst_amount: z.int(),
    igst_amount: z.int(),
    tax_amount: z.int(),
    total: z.int(),
    inr_amount: z.int().nullable(),
    inr_cgst_amount: z.int().nullable(),
    inr_sgst_amount: z.int().nullable(),
    inr_igst_amount: z.int().nullable(),
    plan_id: z.uuid().nullable(),
    period_start: fields.timestamp().nullable(),
    period_end: fields.timestamp().nullable(),
    subscription_id: z.uuid().nullable().describe("on a parent's consolidated invoice: the child's subscription this line bills; null elsewhere"),
    customer_id: z.uuid().nullable().describe("on a parent's consolidated invoice: the child customer whose subscription this line bills; null elsewhere"),
  })
  .meta({ id: 'InvoiceLine' });

const partySchema = z.object({
  name: z.string(),
  legal_name: z.string().nullable().optional(),
  email: z.string().nullable().optional(),
  gstin: z.string().nullable(),
  state_code: z.string().nullable(),
  country_code: z.string().nullable(),
  address: z.record(z.string(), z.string().nullable().optional()).nullable(),
});

export const invoiceSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    number: z.string().nullable(),
    status: invoiceStatus,
    customer_id: z.uuid(),
    entity_id: z.uuid(),
    subscription_id: z.uuid().nullable(),
    billing_reason: z.string(),
    currency: z.string(),
    subtotal: z.int().describe('the taxable value: the sum of line amounts, after discounts'),
    discount_amount: z.int().describe('what discounts took off the lines before GST'),
    tax_amount: z.int(),
    cgst_amount: z.int(),
    sgst_amount: z.int(),
    igst_amount: z.int(),
    tax_type: z.string().describe('intra_state, inter_state, export, sez, or empty when no GST applies'),
    utgst: z.boolean(),
    lut: z.boolean().describe('a zero-rated supply (export or SEZ) made under LUT without payment of IGST'),
    place_of_supply: z.string().nullable(),
    shipping_bill: z
      .object({ port_code: z.string(), number: z.string(), date: z.string() })
      .nullable()
      .optional()
      .describe("an export's shipping bill, once recorded (POST /v1/invoices/{id}/gst-details)"),
    total: z.int(),
    exchange_rate: z.string().nullable().describe('INR per one unit of the currency used for the INR amounts'),
    exchange_rate_source: z.enum(['invoice_currency', 'request', 'entity_rate_table']).nullable(),
    inr_subtotal: z.int().nullable(),
    inr_cgst_amount: z.int().nullable(),
    inr_sgst_amount: z.int().nullable(),
    inr_igst_amount: z.int().nullable(),
    inr_tax_amount: z.int().nullable(),
    inr_total: z.int().nullable(),
    amount_paid: z.int(),
    amount_tds: z.int(),
    amount_credited: z.int(),
    amount_due: z.int(),
    period_start: fields.timestamp().nullable(),
    period_end: fields.timestamp().nullable(),
    issued_at: fields.timestamp().nullable(),
    due_date: fields.timestamp().nullable(),
    paid_at: fields.timestamp().nullable(),
    voided_at: fields.timestamp().nullable(),
    marked_uncollectible_at: fields.timestamp().nullable(),
    supplier: partySchema.nullable(),
    customer_details: partySchema.nullable(),
    memo: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    collection_method: z.enum(['send_invoice', 'charge_automatically']),
    last_payment_error: z.object({ code: z.string(), message: z.string() }).nullable(),
    lines: z.array(invoiceLineSchema),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Invoice' });
export type Invoice = z.infer<typeof invoiceSchema>;

/** DESIGN §13: the invoice the next renewal would issue now; nothing is stored, so `id` is null. */
export const upcomingInvoiceSchema = invoiceSchema.extend({ id: z.null() }).meta({ id: 'UpcomingInvoice' });
