import { createHash } from 'node:crypto';
import { KoshError, errors } from '../../../platform/errors.js';

/**
 * Plumbing shared by the adapters that speak a provider's REST API themselves: one JSON request
 * cut at the call's timeout, a bounded retry loop for outcomes nobody can read (5xx, timeout,
 * connection error), and the errors `attachPaymentMethod` / `createCheckout` raise (the other
 * operations answer outcomes and never throw for a provider's error).
 */

/** Attempts per operation: the first try and two retries. */
export const GATEWAY_MAX_ATTEMPTS = 3;
const RETRY_DELAYS_MS = [200, 800];

export type ProviderResponse =
  | { kind: 'ok'; status: number; body: unknown }
  /** The provider answered 4xx: a definite refusal with its error body. */
  | { kind: 'refused'; status: number; body: unknown }
  /**
   * 5xx, 429, timeout or a connection that failed: whether anything happened is not known, except
   * when `notSent` — the connection failed before a byte of the request left (refused, no DNS, no
   * route), so the provider never saw it.
   */
  | { kind: 'unreadable'; reason: string; notSent?: true };

/**
 * Socket errors raised before a single byte of a request left: the connection was refused, the
 * host name did not resolve, no route to the host. The provider never saw such a request.
 */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Whether an exception (or its `cause`, as fetch's "fetch failed" carries it) is a connection that never sent the request. */
export function failedBeforeSending(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  }
  return false;
}

export async function sendJson(input: {
  url: string;
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}): Promise<ProviderResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${input.timeoutMs} ms`)), input.timeoutMs);
  try {
    const response = await fetch(input.url, {
      method: input.method,
      headers: input.headers,
      body: input.body,
      signal: controller.signal,
      redirect: 'manual',
    });
    const text = await response.text();
    // 429: the provider did nothing and asks to come back; like a 5xx it is retried, not a "no".
    if (response.status >= 500 || response.status === 429) return { kind: 'unreadable', reason: `provider answered ${response.status}` };
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      if (response.status < 400) return { kind: 'unreadable', reason: `provider answered ${response.status} with a body that is not JSON` };
    }
    return response.status >= 400 ? { kind: 'refused', status: response.status, body } : { kind: 'ok', status: response.status, body };
  } catch (error) {
    if (controller.signal.aborted) return { kind: 'unreadable', reason: `timeout: ${(controller.signal.reason as Error).message}` };
    const cause = (error as { cause?: { code?: unknown } }).cause;
    const reason = `connection: ${(error as Error).message}${typeof cause?.code === 'string' ? ` (${cause.code})` : ''}`;
    return failedBeforeSending(error) ? { kind: 'unreadable', reason, notSent: true } : { kind: 'unreadable', reason };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `step` until it gives an answer, at most GATEWAY_MAX_ATTEMPTS times. A step is written so
 * that running it again is safe (it first looks for what an earlier run left at the provider), so
 * a retry never creates a second charge or refund.
 */
export async function withRetries<T>(step: () => Promise<{ done: T } | { retry: string }>): Promise<{ done: T } | { unresolved: string }> {
  let reason = 'not attempted';
  for (let attempt = 0; attempt < GATEWAY_MAX_ATTEMPTS; attempt += 1) {
    if (attempt > 0) await delay(RETRY_DELAYS_MS[attempt - 1] ?? 1000);
    const result = await step();
    if ('done' in result) return result;
    reason = result.retry;
  }
  return { unresolved: reason };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A short, stable reference derived from an idempotency key, for provider fields with a length
 * limit (Razorpay `receipt` and `reference_id`: 40 characters). The full key travels in notes.
 */
export function referenceFromKey(idempotencyKey: string): string {
  return `kosh_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32)}`;
}

/** The provider could not be reached or did not answer readably, after retries. */
export function gatewayUnavailable(reason: string): KoshError {
  return new KoshError('failed_dependency', `payment gateway did not answer (${reason})`, { reason: 'gateway_unavailable' });
}

/** The provider refused the request (bad credentials, invalid token, declined verification). */
export function gatewayRefused(code: string, message: string): KoshError {
  return errors.validation(`payment gateway refused the request (${code}): ${message}`, undefined, `gateway_${code}`);
}

/** Node and undici codes of a connection that failed, was cut or timed out. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/**
 * Whether an exception out of a gateway call leaves its outcome unknown: the gateway did not
 * answer (a timeout, a connection refused or reset — also as the `cause` of fetch's "fetch
 * failed"), answered 5xx or 429, or an adapter gave up on it (`gatewayUnavailable`). Anything else
 * — a TypeError, a database error, a KoshError of our own rules — is a defect or a refusal, never
 * an unknown outcome: the caller lets it propagate.
 */
export function isGatewayOrNetworkError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof KoshError) return e.reason === 'gateway_unavailable';
    const { code, name, statusCode, status, type } = e as { code?: unknown; name?: unknown; statusCode?: unknown; status?: unknown; type?: unknown };
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    if (name === 'AbortError' || name === 'TimeoutError' || type === 'StripeConnectionError') return true;
    const httpStatus = typeof statusCode === 'number' ? statusCode : status;
    if (typeof httpStatus === 'number' && (httpStatus >= 500 || httpStatus === 429)) return true;
  }
  return false;
}
