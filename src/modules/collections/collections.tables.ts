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
}

export interface RefundsTable {
  tenant_id: string;
  id: string;
  payment_id: string;
  invoice_id: string;
  credit_note_id: string;
  amount: number;
  currency: string;
  status: RefundStatus;
  reason: string;
  gateway: string | null;
  connection_id: string | null;
  gateway_refund_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Stored on the invoice after a failed attempt (DESIGN §11 `last_payment_error`). */
export type LastPaymentError = NullableJson<{ code: string; message: string }>;

declare module '../../platform/db/schema.js' {
  interface Tables {
    gateway_connections: GatewayConnectionsTable;
    payment_methods: PaymentMethodsTable;
    payment_attempts: PaymentAttemptsTable;
    checkout_sessions: CheckoutSessionsTable;
    gateway_events: GatewayEventsTable;
    refunds: RefundsTable;
  }
}
