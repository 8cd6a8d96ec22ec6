import { createHash, randomBytes } from 'node:crypto';
import type { AccountingProviderConfig } from '../../platform/config.js';
import { basicAuth, callProvider, ProviderError } from './providers/http.js';
import type { AccountingAdapter, TokenSet } from './providers/provider.js';

/** PKCE (RFC 7636): a 43-character verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * The OAuth `state` Kosh sends: `<tenant id>.<32 random bytes>`. The tenant part lets the
 * callback (which carries no API key) find the stored row by its tenant-scoped key; only the
 * hash of the random part is stored, so a database reader cannot forge a callback.
 */
export function newOAuthState(tenantId: string): { state: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { state: `${tenantId}.${secret}`, hash: sha256(secret) };
}

export function parseOAuthState(state: string): { tenantId: string; hash: string } | null {
  const m = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/.exec(state);
  return m ? { tenantId: m[1]!, hash: sha256(m[2]!) } : null;
}

export function authorizeUrl(adapter: AccountingAdapter, config: AccountingProviderConfig, redirectUri: string, state: string, challenge: string): string {
  const url = new URL(config.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', config.clientId ?? '');
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('scope', adapter.scopes);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  for (const [k, v] of Object.entries(adapter.authorizeParams)) url.searchParams.set(k, v);
  return url.toString();
}

type TokenAnswer = { access_token?: string; refresh_token?: string; expires_in?: number | string; error?: string; error_description?: string };

function describeOAuthError(_status: number, body: unknown): { message: string; code?: string } {
  const b = body as TokenAnswer;
  return { message: [b.error, b.error_description].filter(Boolean).join(': ') || JSON.stringify(body).slice(0, 300), code: b.error };
}

/**
 * A call to the token endpoint. `invalid_grant` (a refresh token revoked, expired or already
 * spent) comes back as a ProviderError with code `invalid_grant`, whatever status carries it —
 * Zoho answers it with 200.
 */
async function tokenRequest(
  adapter: AccountingAdapter,
  config: AccountingProviderConfig,
  params: Record<string, string>,
  nowMs: number,
  previousRefresh?: string,
): Promise<TokenSet> {
  const body = new URLSearchParams(params);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (adapter.tokenAuth === 'basic') headers.authorization = basicAuth(config);
  else {
    body.set('client_id', config.clientId ?? '');
    body.set('client_secret', config.clientSecret ?? '');
  }
  const res = await callProvider(config.tokenUrl, { method: 'POST', headers, body: body.toString() }, describeOAuthError, nowMs);
  const answer = (typeof res.body === 'object' && res.body !== null ? res.body : {}) as TokenAnswer;
  if (answer.error) throw new ProviderError('invalid', describeOAuthError(res.status, answer).message, 400, undefined, answer.error);
  const refresh = answer.refresh_token ?? previousRefresh;
  if (!answer.access_token || !refresh) throw new ProviderError('invalid', 'the token endpoint answered without an access and refresh token', res.status);
  const expiresIn = Number(answer.expires_in ?? 3600);
  return { access_token: answer.access_token, refresh_token: refresh, expires_in: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600 };
}

export function exchangeCode(
  adapter: AccountingAdapter,
  config: AccountingProviderConfig,
  code: string,
  redirectUri: string,
  verifier: string,
  nowMs: number,
): Promise<TokenSet> {
  return tokenRequest(adapter, config, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }, nowMs);
}

/** Refresh-token grant; providers that rotate (QuickBooks, Xero) answer a new refresh token. */
export function refreshTokens(adapter: AccountingAdapter, config: AccountingProviderConfig, refreshToken: string, nowMs: number): Promise<TokenSet> {
  return tokenRequest(adapter, config, { grant_type: 'refresh_token', refresh_token: refreshToken }, nowMs, refreshToken);
}
