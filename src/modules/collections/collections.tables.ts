import type { ColumnType } from 'kysely';
import type { Json, NullableJson, Timestamp } from '../../platform/db/schema.js';

export type AttemptStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';
export type PendingReason = 'charging' | 'notice' | 'gateway' | 'unknown';
export type RefundStatus = 'pending' | 'succeeded' | 'failed';
export type CollectionMethod = 'send_invoice' | 'charge_automatically';

export interface GatewayConnectionsTable {
  tenant_id: string;
  id: string;
  provider: string;
  credentials_sealed: string;
  currencies: Json<string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PaymentMethodsTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  type: 'card' | 'upi_mandate';
  brand: string | null;
  last4: string | null;
  gateway: string;
  connection_id: string | null;
  reference: string;
  gateway_customer_id: string | null;
  requires_pre_debit_notice: boolean;
  /** A mandate's terms (docs/decisions/0520): the most one debit may take, its validity and frequency; null when not stated. */
  mandate_max_amount: number | null;
  mandate_valid_from: Timestamp | null;
  mandate_valid_until: Timestamp | null;
  mandate_frequency: string | null;
  is_default: boolean;
  status: 'active' | 'detached' | 'revoked';
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PaymentAttemptsTable {
  tenant_id: string;
  id: string;
  invoice_id: string;
  customer_id: string;
  payment_method_id: string | null;
  checkout_session_id: string | null;
  gateway: string;
  connection_id: string | null;
  amount: number;
  currency: string;
  status: AttemptStatus;
  pending_reason: PendingReason | null;
  charge_after: Timestamp | null;
  gateway_payment_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  payment_id: string | null;
  /** SHA-256 (hex) of the token of the pre-debit notice's "skip this debit" link (mandate debits only). */
  skip_token_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CheckoutSessionsTable {
  tenant_id: string;
  id: string;
  invoice_id: string;
  /** Sessions made before migration 0212 only: newer ones keep `token_hash`. */
  token: string | null;
  /** SHA-256 (hex) of the link's token. */
  token_hash: string | null;
  gateway: string;
  connection_id: string | null;
  status: 'open' | 'complete' | 'expired';
  gateway_reference: string | null;
  redirect_url: string | null;
  /** What Kosh asked the provider to collect (null on sessions made before migration 0240). */
  amount: number | null;
  currency: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A payment method being saved on the provider's hosted page (docs/decisions/0730). */
export interface PaymentSetupSessionsTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  gateway: string;
  connection_id: string;
  method: 'card' | 'upi_mandate';
  status: 'open' | 'complete';
  /** Stripe Checkout Session `cs_…`, Razorpay registration link (invoice) `inv_…`. */
  gateway_reference: string;
  redirect_url: string;
  /** An e-mandate's terms as shown to the customer; null for a card without a mandate. */
  mandate_max_amount: number | null;
  mandate_valid_until: Timestamp | null;
  mandate_frequency: string | null;
  /** The consent sentence the customer agreed to, and when. */
  consent_text: string | null;
  consented_at: Timestamp | null;
  /** The payment method the completion saved. */
  payment_method_id: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface GatewayEventsTable {
  tenant_id: string;
  id: string;
  connection_id: string;
  provider: string;
  event_id: string;
  type: string;
  received_at: Timestamp;
  /** Set when the event was kept for review instead of applied (a payment whose amount or currency did not match). */
  review: NullableJson<GatewayEventReview>;
}

/** Why a gateway event was not applied, and what it carried (docs/decisions/0242). */
export type GatewayEventReview = {
  reason: 'amount_mismatch' | 'currency_mismatch';
  invoice_id: string;
  attempt_id: string | null;
  checkout_session_id: string | null;
  gateway_payment_id: string | null;
  expected: { amount: number; currency: string };
  received: { amount: number | null; currency: string | null };
};

export interface RefundsTable {
  tenant_id: string;
  id: string;
  /** null: an offline refund of a note's balance that names no payment (goodwill credit). */
  payment_id: string | null;
  invoice_id: string | null;
  customer_id: string;
  /** The note the refund issued, or (issued_credit_note false) the first note whose balance it paid out; null for an advance's refund. */
  credit_note_id: string | null;
  /** The advance whose refund voucher's money the refund pays back (through the gateway, or by hand), else null. */
  advance_id: string | null;
  /** An advance's offline refund that carries the money of the gateway refund the gateway refused (decision 0740). */
  replaces_refund_id: ColumnType<string | null, string | null | undefined, string | null>;
  issued_credit_note: boolean;
  amount: number;
  currency: string;
  status: RefundStatus;
  reason: string;
  gateway: string | null;
  connection_id: string | null;
  gateway_refund_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  /** An offline refund: when the money left by hand (bank transfer, cash, cheque), as recorded by `mark_paid`. */
  paid_at: Timestamp | null;
  /** An offline refund: the bank's or cheque's reference given by `mark_paid`. */
  reference: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Which notes' balances a refund paid out, and how much of each (docs/decisions/0250). */
export interface RefundCreditNotesTable {
  tenant_id: string;
  refund_id: string;
  credit_note_id: string;
  amount: number;
}

/** Stored on the invoice after a failed attempt (DESIGN §11 `last_payment_error`). */
export type LastPaymentError = NullableJson<{ code: string; message: string }>;

declare module '../../platform/db/schema.js' {
  interface Tables {
    gateway_connections: GatewayConnectionsTable;
    payment_methods: PaymentMethodsTable;
    payment_attempts: PaymentAttemptsTable;
    checkout_sessions: CheckoutSessionsTable;
    payment_setup_sessions: PaymentSetupSessionsTable;
    gateway_events: GatewayEventsTable;
    refunds: RefundsTable;
    refund_credit_notes: RefundCreditNotesTable;
  }
}
