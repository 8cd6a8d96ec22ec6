/**
 * The Kosh API client: `openapi-fetch` over the types generated from the OpenAPI document
 * (`src/schema.d.ts`, `npm run generate:client`), plus what every caller of a billing API needs:
 *   - an `Idempotency-Key` on every mutating request (a fresh UUID unless you pass one), kept across
 *     retries so a retried POST never acts twice;
 *   - retries with exponential back-off and jitter on network errors, 429 and 5xx (honouring
 *     `Retry-After`).
 *
 *   const kosh = createKoshClient({ baseUrl: 'http://localhost:8080', apiKey: 'sk_test_…' });
 *   const { data, error } = await kosh.POST('/v1/plans', { body: { name: 'Pro', interval_unit: 'month', amount: 49900, currency: 'INR' } });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths, webhooks } from './schema.js';

export type { components, operations, paths, webhooks };
/** A resource as the API returns it, e.g. `Schema<'Plan'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
/** The error envelope every 4xx/5xx carries. */
export type KoshError = components['schemas']['Error'];

export type RetryOptions = {
  /** Attempts after the first (default 3; 0 turns retrying off). */
  retries?: number;
  /** First back-off in ms, doubled each attempt (default 200). */
  baseDelayMs?: number;
  /** Longest single wait in ms (default 5 000). */
  maxDelayMs?: number;
};

export type KoshClientOptions = {
  baseUrl: string;
  /** `sk_test_…` or `sk_live_…`. */
  apiKey?: string;
  retry?: RetryOptions;
  /** The underlying fetch (default: globalThis.fetch). */
  fetch?: typeof fetch;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
};

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A fresh idempotency key: pass it yourself to retry an action across process restarts. */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

function retryable(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504 || status === 500;
}

function delayFor(attempt: number, options: Required<RetryOptions>, retryAfter: string | null): number {
  const seconds = retryAfter !== null ? Number(retryAfter) : Number.NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, options.maxDelayMs);
  const exponential = options.baseDelayMs * 2 ** attempt;
  return Math.min(exponential / 2 + Math.random() * (exponential / 2), options.maxDelayMs);
}

/**
 * A fetch that adds the Idempotency-Key to mutating requests and retries what is safe to retry:
 * every request that carries a key or is a read (GET/HEAD), on a network error, 429 or 5xx.
 */
export function retryingFetch(retry: RetryOptions = {}, base: typeof fetch = globalThis.fetch): (request: Request) => Promise<Response> {
  const options: Required<RetryOptions> = { retries: retry.retries ?? 3, baseDelayMs: retry.baseDelayMs ?? 200, maxDelayMs: retry.maxDelayMs ?? 5000 };
  return async (input: Request) => {
    let request = input;
    if (MUTATING.has(request.method) && !request.headers.has('idempotency-key')) {
      const headers = new Headers(request.headers);
      headers.set('idempotency-key', newIdempotencyKey());
      request = new Request(request, { headers });
    }
    const safe = !MUTATING.has(request.method) || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= options.retries || !safe;
      try {
        const response = await base(request.clone());
        if (last || !retryable(response.status)) return response;
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, delayFor(attempt, options, response.headers.get('retry-after'))));
      } catch (error) {
        if (last) throw error;
        await new Promise((resolve) => setTimeout(resolve, delayFor(attempt, options, null)));
      }
    }
  };
}

export type KoshClient = Client<paths>;

export function createKoshClient(options: KoshClientOptions): KoshClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    headers: { ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}), ...options.headers },
    fetch: retryingFetch(options.retry, options.fetch),
  });
}
