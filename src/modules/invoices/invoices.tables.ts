import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableJson, Timestamp, TableAccess } from '../../platform/db/schema.js';

export type InvoiceStatus = 'draft' | 'open' | 'paid' | 'void' | 'uncollectible';

/** Who issued and who received the invoice, frozen at finalization (a GST invoice never changes). */
export type PartySnapshot = {
  name: string;
  legal_name?: string | null;
  email?: string | null;
  gstin: string | null;
  state_code: string | null;
  country_code: string | null;
  address: Record<string, string | null | undefined> | null;
};

/** An export invoice's shipping bill, as GSTR-1's `exp` table writes it (`sbpcode`, `sbnum`, `sbdt`). */
export type ShippingBill = { port_code: string; number: string; date: string };

export interface InvoicesTable {
  tenant_id: string;
  id: string;
  entity_id: string;
  customer_id: string;
  subscription_id: string | null;
  number: string | null;
  status: InvoiceStatus;
  billing_reason: string;
  currency: string;
  /** The taxable value: the lines' amounts, discounts already taken off. */
  subtotal: number;
  /** What discounts took off the lines before GST (DESIGN §13); 0 without a discount. */
  discount_amount: Generated<number>;
  tax_amount: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_type: string;
  utgst: boolean;
  /** A zero-rated supply (export or SEZ) made under LUT without payment of IGST. */
  lut: boolean;
  place_of_supply: string | null;
  /** An export's shipping bill (port code, number, date YYYY-MM-DD), once recorded (decision 0610). */
  shipping_bill: ColumnType<ShippingBill | null, string | null | undefined, string | null>;
  total: number;
  /** INR per one unit of `currency`, a decimal string ("83.2575"); null when not determined. */
  exchange_rate: string | null;
  exchange_rate_source: 'invoice_currency' | 'request' | 'entity_rate_table' | null;
  /** The amounts in INR as GST determines them (CGST Rules, rule 34); null when not determined. */
  inr_subtotal: number | null;
  inr_cgst_amount: number | null;
  inr_sgst_amount: number | null;
  inr_igst_amount: number | null;
  inr_tax_amount: number | null;
  inr_total: number | null;
  amount_paid: number;
  amount_tds: number;
  amount_credited: number;
  amount_due: number;
  period_start: Timestamp | null;
  period_end: Timestamp | null;
  issued_at: Timestamp | null;
  due_date: Timestamp | null;
  paid_at: Timestamp | null;
  voided_at: Timestamp | null;
  marked_uncollectible_at: Timestamp | null;
  supplier: NullableJson<PartySnapshot>;
  customer_details: NullableJson<PartySnapshot>;
  memo: string | null;
  metadata: Json<Record<string, unknown>>;
  /** DESIGN §11: `send_invoice` (the customer pays) or `charge_automatically` (the default payment method is charged). */
  collection_method: 'send_invoice' | 'charge_automatically';
  /** The last failed collection attempt's `{ code, message }`; null otherwise. */
  last_payment_error: NullableJson<{ code: string; message: string }>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InvoiceLinesTable {
  tenant_id: string;
  id: string;
  invoice_id: string;
  position: number;
  description: string;
  quantity: number;
  unit_amount: number;
  /** Taken off quantity × unit_amount before GST: `amount` is the net taxable value. */
  discount_amount: Generated<number>;
  amount: number;
  hsn_code: string;
  rate_bp: number;
  /** The rate the line or plan gave (`tax_rate_bp`), which the code's rate yields to. */
  explicit_rate_bp: number | null;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_amount: number;
  total: number;
  inr_amount: number | null;
  inr_cgst_amount: number | null;
  inr_sgst_amount: number | null;
  inr_igst_amount: number | null;
  plan_id: string | null;
  price_id: string | null;
  period_start: Timestamp | null;
  period_end: Timestamp | null;
  /** On a parent's consolidated invoice (decision 0550): the child's subscription and the child; null elsewhere. */
  subscription_id: string | null;
  customer_id: string | null;
}

/** TDS the customer certified (Form 16A; Form 131 from 1 April 2026) after paying the rest; it settled its part of the invoice. */
export interface InvoiceTdsCertificatesTable {
  tenant_id: string;
  id: string;
  invoice_id: string;
  customer_id: string;
  tds_amount: number;
  certificate_number: string | null;
  section: string | null;
  /** YYYY-MM-DD in India: the day the customer credited or paid (docs/decisions/0510). */
  deducted_on: string;
  /** The Income-tax Act 2025 payment code: the section from 1 April 2026, the mapped old code before (null when none is corroborated). */
  payment_code: string | null;
  certificate_form: 'Form 16A' | 'Form 131';
  created_at: Timestamp;
}

/** A one-off charge waiting for the next invoice of its customer (or of its subscription): DESIGN §24. */
export interface PendingChargesTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  subscription_id: string | null;
  description: string;
  currency: string;
  unit_amount: number;
  quantity: number;
  hsn_code: string;
  tax_rate_bp: number | null;
  status: 'pending' | 'invoiced';
  invoice_id: string | null;
  created_at: Timestamp;
  invoiced_at: Timestamp | null;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    invoices: InvoicesTable;
    pending_charges: PendingChargesTable;
    invoice_lines: InvoiceLinesTable;
    invoice_tds_certificates: InvoiceTdsCertificatesTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const invoicesTableAccess: TableAccess = {
  // Late usage events: a period whose renewal is still a draft takes them (decision 0690).
  invoices: { read: ['analytics', 'dunning', 'finance', 'gst-returns', 'subscriptions'] },
  invoice_lines: { read: ['gst-returns'] },
  invoice_tds_certificates: { read: ['finance'] },
};
