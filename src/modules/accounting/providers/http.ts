/**
 * Calls to accounting providers. Every answer that is not a 2xx becomes a ProviderError with the
 * provider's own message, so nothing a provider sends (an HTML error page, a JSON fault) ever
 * reaches a Kosh caller as a 500: the sync records it per record, the callback redirects with it.
 */
export type ProviderErrorKind = 'rate_limited' | 'unauthorized' | 'invalid' | 'stale' | 'not_found' | 'unavailable';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status: number,
    /** For `rate_limited`: how long the provider asked us to wait (Retry-After). */
    readonly retryAfterMs?: number,
    /** The provider's own error code (QuickBooks `5010`, Zoho `1002`, OAuth `invalid_grant`). */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export type ProviderResponse = { status: number; body: unknown; headers: Headers };

const TIMEOUT_MS = 30_000;

/** Parses Retry-After (seconds or an HTTP date); defaults to 60 s when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number {
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (Number.isFinite(at)) return Math.max(0, at - nowMs);
  }
  return 60_000;
}

/**
 * One request. `describe` turns the provider's error body into a message and code; the status
 * decides the kind (429 → rate_limited, 401/403 → unauthorized, 404 → not_found, other 4xx →
 * invalid, 5xx and network failures → unavailable).
 */
export async function callProvider(
  url: string,
  init: RequestInit,
  describe: (status: number, body: unknown) => { message: string; code?: string },
  nowMs: number,
): Promise<ProviderResponse> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new ProviderError('unavailable', `provider unreachable: ${(error as Error).message}`, 0);
  }
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (response.ok) return { status: response.status, body, headers: response.headers };
  const described = typeof body === 'object' && body !== null ? describe(response.status, body) : { message: `HTTP ${response.status}: ${text.slice(0, 200)}` };
  const message = described.message.slice(0, 1000);
  if (response.status === 429) {
    throw new ProviderError('rate_limited', message, 429, retryAfterMs(response.headers.get('retry-after'), nowMs), described.code);
  }
  if (response.status === 401 || response.status === 403) throw new ProviderError('unauthorized', message, response.status, undefined, described.code);
  if (response.status === 404) throw new ProviderError('not_found', message, 404, undefined, described.code);
  if (response.status >= 500) throw new ProviderError('unavailable', message, response.status, undefined, described.code);
  throw new ProviderError('invalid', message, response.status, undefined, described.code);
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, accept: 'application/json' };
}

/** HTTP Basic client authentication (`client_secret_basic`). */
export function basicAuth(config: { clientId?: string | undefined; clientSecret?: string | undefined }): string {
  return `Basic ${Buffer.from(`${config.clientId ?? ''}:${config.clientSecret ?? ''}`).toString('base64')}`;
}
