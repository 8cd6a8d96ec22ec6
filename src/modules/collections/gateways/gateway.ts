/**
 * The one interface every payment gateway speaks (DESIGN §11). Adapters know the provider's REST
 * API and nothing of Kosh's database: the collections service gives them plain values (the
 * decrypted credentials of the tenant's connection, amounts in minor units, the saved payment
 * method's gateway references) and records what they answer.
 *
 * Exactly-once rule: `charge` and `refund` always carry an idempotency key derived from Kosh's
 * attempt/refund id. When the outcome is unknown (timeout, connection reset, 5xx after the
 * adapter's own retries with the same key) the adapter answers `unknown`, and the caller resolves
 * it later with `lookupCharge` — never by charging again.
 */

import type { AppScope } from '../../../platform/app-scope.js';

export type GatewayProvider = 'test' | 'razorpay' | 'stripe';

/** Decrypted credentials of a gateway connection (razorpay: key_id, key_secret, webhook_secret; stripe: secret_key, webhook_secret). */
export type GatewayCredentials = Record<string, string>;

export type GatewayCallContext = {
  credentials: GatewayCredentials;
  /** Base URL of the provider's API (configuration, so tests aim it at local servers). */
  baseUrl: string;
  /** Per-request timeout; DESIGN §11 and the issue cut at 10 s. */
  timeoutMs: number;
  /** The injected clock's now (webhook tolerance, mandate notice). */
  now: Date;
  /** The calling app's own state: the test gateway keeps its in-memory journal there (absent for calls outside an app). */
  scope?: AppScope;
};

export type GatewayCustomer = { id: string; email: string; name: string | null; phone?: string | null };

/** What Kosh stores of a saved payment method; `reference` is the provider's id for it. */
export type SavedPaymentMethod = {
  type: 'card' | 'upi_mandate';
  brand: string | null;
  last4: string | null;
  /** Provider id: Stripe `pm_…`, Razorpay token `token_…`, test gateway token name. */
  reference: string;
  /** Provider customer id (Stripe `cus_…`, Razorpay `cust_…`), when the provider needs one. */
  gatewayCustomerId: string | null;
  /** UPI AutoPay / e-mandate: debits must be announced ≥ 24 h ahead (RBI). */
  requiresPreDebitNotice: boolean;
};

export type AttachPaymentMethodInput = { token: string; customer: GatewayCustomer; gatewayCustomerId: string | null };

export type ChargeInput = {
  /** Stable for one attempt, whatever happens to the worker: `kosh_att_<attempt id>`. */
  idempotencyKey: string;
  amount: number;
  currency: string;
  paymentMethod: SavedPaymentMethod;
  customer: GatewayCustomer;
  description: string;
  metadata: { tenant_id: string; invoice_id: string; attempt_id: string };
};

export type ChargeOutcome =
  | { status: 'succeeded'; gatewayPaymentId: string; paymentType: 'card' | 'upi' }
  | { status: 'failed'; gatewayPaymentId: string | null; failureCode: string; failureMessage: string }
  /** Accepted but not final (UPI collect, mandate debit): settled later by webhook or lookup. */
  | { status: 'pending'; gatewayPaymentId: string | null }
  /** Nobody knows whether money moved (timeout, 5xx after retries): resolve with lookupCharge. */
  | { status: 'unknown'; reason: string };

export type LookupChargeInput = { idempotencyKey: string; gatewayPaymentId: string | null; metadata: ChargeInput['metadata'] };

export type RefundInput = {
  idempotencyKey: string;
  gatewayPaymentId: string;
  amount: number;
  currency: string;
  reason: string;
};

export type RefundOutcome =
  | { status: 'succeeded' | 'pending'; gatewayRefundId: string }
  | { status: 'failed'; gatewayRefundId: string | null; failureCode: string; failureMessage: string }
  | { status: 'unknown'; reason: string };

export type CheckoutInput = {
  idempotencyKey: string;
  amount: number;
  currency: string;
  customer: GatewayCustomer;
  description: string;
  successUrl: string;
  cancelUrl: string;
  metadata: { tenant_id: string; invoice_id: string; checkout_session_id: string };
};

/** `kosh`: Kosh's own hosted page takes the card (test gateway); `redirect`: hand over to the provider's checkout. */
export type CheckoutOutcome = { kind: 'kosh' } | { kind: 'redirect'; url: string; gatewayReference: string };

/**
 * Saving a payment method on the provider's hosted page (docs/decisions/0730): a Stripe Checkout
 * Session in setup mode, a Razorpay registration link (UPI AutoPay or card e-mandate). The
 * provider sends the customer back to `successUrl`; Kosh then asks the provider what happened
 * (`lookupSetup`) and never believes the return address's query.
 */
export type SetupInput = {
  idempotencyKey: string;
  method: 'card' | 'upi_mandate';
  currency: string;
  customer: GatewayCustomer;
  /** An e-mandate's terms as the customer agreed them (Razorpay sends them as the registration's limits). */
  mandate: { maxAmount: number; validUntil: Date | null; frequency: string } | null;
  description: string;
  successUrl: string;
  cancelUrl: string;
  metadata: { tenant_id: string; customer_id: string; setup_session_id: string };
};

/** What the provider says of a hosted setup: the method it saved, still open, or over without one. */
export type SetupLookup = { status: 'complete'; saved: SavedPaymentMethod } | { status: 'open' } | { status: 'failed'; message: string };

/** What the provider says of a hosted checkout: paid (with what it collected), or not (yet). */
export type CheckoutLookup = { status: 'paid'; gatewayPaymentId: string; amount: number; currency: string; paymentType: 'card' | 'upi' } | { status: 'open' };

/** A verified inbound webhook, reduced to what Kosh acts on. */
export type GatewayWebhookEvent = {
  /** The provider's event id (deduplication key). */
  eventId: string;
  type: 'payment.succeeded' | 'payment.failed' | 'refund.succeeded' | 'refund.failed' | 'mandate.revoked' | 'setup.completed' | 'ignored';
  gatewayPaymentId: string | null;
  gatewayRefundId: string | null;
  amount: number | null;
  currency: string | null;
  failureCode: string | null;
  failureMessage: string | null;
  /** Kosh's metadata echoed by the provider (notes / metadata), when present. */
  metadata: Record<string, string>;
  /** Saved payment method reference for mandate events. */
  paymentMethodReference: string | null;
  /** How the customer paid, when the provider says (a hosted checkout payment has no saved method to tell). */
  paymentType?: 'card' | 'upi';
};

export type VerifyWebhookInput = { rawBody: Buffer; headers: Record<string, string | string[] | undefined>; webhookSecret: string; now: Date };

export class GatewayWebhookSignatureError extends Error {}

/** attachPaymentMethod: the provider does not know this token (Kosh answers 404). */
export class GatewayTokenNotFoundError extends Error {}

export interface GatewayAdapter {
  readonly provider: GatewayProvider;
  attachPaymentMethod(ctx: GatewayCallContext, input: AttachPaymentMethodInput): Promise<SavedPaymentMethod>;
  charge(ctx: GatewayCallContext, input: ChargeInput): Promise<ChargeOutcome>;
  /** What became of a charge sent with this idempotency key; `not_found` means it never reached the provider. */
  lookupCharge(ctx: GatewayCallContext, input: LookupChargeInput): Promise<ChargeOutcome | { status: 'not_found' }>;
  refund(ctx: GatewayCallContext, input: RefundInput): Promise<RefundOutcome>;
  createCheckout(ctx: GatewayCallContext, input: CheckoutInput): Promise<CheckoutOutcome>;
  /** The provider's hosted checkout's state, asked server-to-server (providers with a hosted page only). */
  lookupCheckout?(ctx: GatewayCallContext, gatewayReference: string): Promise<CheckoutLookup>;
  /** A hosted page that saves a payment method (providers with one only). */
  createSetup?(ctx: GatewayCallContext, input: SetupInput): Promise<{ url: string; gatewayReference: string }>;
  /** The hosted setup's outcome, asked server-to-server. */
  lookupSetup?(ctx: GatewayCallContext, gatewayReference: string): Promise<SetupLookup>;
  /** Verifies the provider's signature over the raw body; throws GatewayWebhookSignatureError when it does not hold. */
  verifyWebhook(input: VerifyWebhookInput): GatewayWebhookEvent;
}
