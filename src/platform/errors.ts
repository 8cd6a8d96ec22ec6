/**
 * The one closed error catalog. Every failure the API reports is a KoshError of one of these
 * kinds; `toEnvelope` in platform/http maps it to the wire. Codes stay within SPEC §7's set (plus
 * `rate_limited`, for limits SPEC does not show);
 * `reason` carries the finer machine-readable word.
 */
export const errorCatalog = {
  validation_failed: { status: 400, code: 'validation_failed', message: 'validation failed' },
  unauthorized: { status: 401, code: 'unauthorized', message: 'missing or invalid API key or session' },
  forbidden: { status: 403, code: 'unauthorized', message: 'not allowed' },
  not_found: { status: 404, code: 'not_found', message: 'not found' },
  /** A link that existed once and no longer works (an expired or used invitation or reset link). */
  gone: { status: 410, code: 'not_found', message: 'this link has expired or was already used' },
  conflict: { status: 409, code: 'conflict', message: 'conflict' },
  /** The path exists but not with this method; answered with the `Allow` header. */
  method_not_allowed: { status: 405, code: 'validation_failed', message: 'method not allowed' },
  payload_too_large: { status: 413, code: 'validation_failed', message: 'request body too large' },
  unprocessable: { status: 422, code: 'validation_failed', message: 'validation failed' },
  /** Over a request budget (platform/http/rate-limits); answered with Retry-After and RateLimit-* headers. */
  rate_limited: { status: 429, code: 'rate_limited', message: 'too many requests' },
  failed_dependency: { status: 424, code: 'internal_error', message: 'a dependent step failed' },
  internal_error: { status: 500, code: 'internal_error', message: 'internal error' },
  unavailable: { status: 503, code: 'internal_error', message: 'service not available on this deployment' },
  /** The database dropped, refused or timed out: nothing was committed; the request may be retried (Retry-After). */
  database_unavailable: { status: 503, code: 'internal_error', message: 'the database is unavailable; retry the request shortly' },
} as const;

export type ErrorKind = keyof typeof errorCatalog;

/**
 * Every `reason` the API answers with: the finer word clients branch on. A new reason is added
 * here (and, when a client should handle it, in the route's docs).
 */
export type ErrorReason =
  // authentication and transport
  | 'invalid_api_key'
  | 'invalid_admin_token'
  | 'invalid_session'
  | 'key_mode_mismatch'
  | 'csrf_token_invalid'
  | 'registration_closed'
  | 'malformed_json'
  | 'prototype_key'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'rate_limited'
  | 'database_unavailable'
  // idempotency
  | 'idempotency_key_in_use'
  | 'idempotency_key_reused'
  // business rules
  | 'invalid_state'
  | 'plan_inactive'
  | 'plan_code_taken'
  | 'customer_not_found'
  | 'customer_email_taken'
  | 'customer_email_missing'
  | 'customer_hierarchy_cycle'
  | 'customer_hierarchy_too_deep'
  | 'external_id_taken'
  | 'email_not_configured'
  | 'cancellation_pending'
  | 'no_pending_cancellation'
  | 'already_referred'
  | 'amount_exceeds_due'
  | 'amount_exceeds_balance'
  | 'webhook_endpoint_limit'
  | 'invalid_invoice_state'
  | 'invalid_credit_note_state'
  | 'invalid_subscription_state'
  | 'amount_exceeds_invoice'
  | 'number_series_exhausted'
  | 'period_ended'
  | 'amount_exceeds_line'
  | 'credit_lines_unavailable'
  | 'cross_site_request'
  | 'portal_action_disabled'
  | 'invalid_metrics_token'
  // trust round 3 (DESIGN §21): targets, bodies and templates refused before they do harm
  | 'malformed_url'
  | 'path_parameter_too_long'
  | 'json_too_deep'
  | 'template_invalid'
  | 'template_over_limit'
  | 'oauth_binding_mismatch'
  // usage
  | 'metric_code_taken'
  | 'usage_period_closed'
  | 'metric_already_metered'
  // pending one-off charges (DESIGN §24)
  | 'pending_charge_invoiced'
  // operators (DESIGN §17)
  | 'invalid_credentials'
  | 'totp_required'
  | 'role_forbidden'
  | 'approval_requires_second_person'
  | 'session_required'
  | 'invitation_expired'
  | 'reset_token_expired'
  | 'last_owner'
  | 'user_email_taken'
  | 'totp_not_set_up'
  | 'totp_already_enabled'
  // collections
  | 'no_gateway_for_currency'
  | 'gateway_unavailable'
  | 'gateway_connection_removed'
  | 'payment_in_progress'
  | 'payment_setup_failed'
  | 'invalid_signature'
  // a payment's TDS certificate (decision 0770)
  | 'payment_has_no_tds'
  | 'tds_already_certified'
  // UPI AutoPay: one attempt and three retries per debit (NPCI; decision 0520)
  | 'autopay_retry_limit'
  // dunning, organizations, finance
  | 'campaign_has_active_executions'
  | 'already_in_organization'
  | 'reconciliation_running'
  // e-invoicing
  | 'einvoice_cancel_window_closed'
  | 'einvoice_not_generated'
  | 'einvoice_not_failed'
  | 'einvoice_buyer_changes_supply'
  | 'invalid_einvoice_state'
  // GST registration (DESIGN §20): an entity without a GSTIN files no returns and registers no IRNs
  | 'entity_not_gst_registered'
  // a correction of an issued invoice's GST particulars that would change its tax or table (decision 0610)
  | 'gst_correction_changes_supply'
  // an export in a financial year without an LUT, the entity set to refuse it (decision 0282)
  | 'lut_missing'
  // periods and close (DESIGN §18)
  | 'void_not_allowed'
  | 'credit_note_time_barred'
  | 'period_closed'
  | 'period_open'
  | 'period_has_drafts'
  | 'return_already_filed'
  // India 2025–26 (DESIGN §25)
  | 'irn_reporting_limit_passed'
  | 'gstr1_not_filed'
  | 'gstr1a_closed'
  // retention offers (decision 0560)
  | 'retention_reason_taken'
  | 'retention_offer_unavailable'
  // accounting
  | 'provider_not_configured'
  | 'no_active_connection'
  // a gateway's own refusal code (`gateway_card_declined`), an accounting connection's state (`connection_reconnect_required`)
  | `${'gateway' | 'connection'}_${string}`
  // `<record>_<status or condition>` (the guarded transitions' refusals, e.g. gift_canceled, invoice_void)
  | `${'test_clock' | 'gift' | 'credit_grant' | 'feature' | 'alert' | 'quote' | 'referral' | 'refund' | 'credit_note' | 'invoice' | 'subscription' | 'coupon' | 'price' | 'plan' | 'advance'}_${string}`
  // Fastify's own client errors, lower-cased (fst_err_…)
  | `fst_${string}`;

export type ErrorDetail = { field: string; message: string };

export class KoshError extends Error {
  readonly kind: ErrorKind;
  readonly reason: ErrorReason | undefined;
  readonly details: ErrorDetail[] | undefined;

  constructor(kind: ErrorKind, message?: string, options: { reason?: ErrorReason; details?: ErrorDetail[]; cause?: unknown } = {}) {
    super(message ?? errorCatalog[kind].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KoshError';
    this.kind = kind;
    this.reason = options.reason;
    this.details = options.details;
  }

  get status(): number {
    return errorCatalog[this.kind].status;
  }
}

export const errors = {
  validation: (message: string, details?: ErrorDetail[], reason?: ErrorReason) => new KoshError('validation_failed', message, { details, reason }),
  invalidField: (field: string, message: string) => new KoshError('validation_failed', fieldSentence(field, message), { details: [{ field, message }] }),
  unauthorized: (reason: ErrorReason, message?: string) => new KoshError('unauthorized', message, { reason }),
  forbidden: (message: string, reason?: ErrorReason) => new KoshError('forbidden', message, { reason }),
  /** Missing and foreign-tenant records answer exactly alike. */
  notFound: (what: string) => new KoshError('not_found', `${what} not found`),
  conflict: (message: string, reason?: ErrorReason) => new KoshError('conflict', message, { reason }),
  gone: (message: string, reason?: ErrorReason) => new KoshError('gone', message, { reason }),
  unprocessable: (message: string, reason?: ErrorReason) => new KoshError('unprocessable', message, { reason }),
  unavailable: (message: string, reason?: ErrorReason) => new KoshError('unavailable', message, { reason }),
  rateLimited: (message: string, reason?: ErrorReason) => new KoshError('rate_limited', message, { reason }),
};

export function isKoshError(error: unknown): error is KoshError {
  return error instanceof KoshError;
}

/**
 * A field's complaint as one plain sentence, the field its subject: `currency is required`,
 * `from must be a date like 2026-04-01`. A message that does not read on from the field's name
 * keeps the colon (`ending_before: give starting_after or ending_before, not both`).
 */
export function fieldSentence(field: string, message: string): string {
  return /^(must|is|are|has|have|may|cannot|can|does|do|needs|exceeds|should|was|were|not)\b/.test(message) ? `${field} ${message}` : `${field}: ${message}`;
}
