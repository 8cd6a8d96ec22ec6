import { createHash, randomBytes } from 'node:crypto';
import { sameSecret } from '../../platform/auth/secrets-compare.js';
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

/**
 * RFC 6749 §10.12: the callback must come from the browser that started the flow, else a victim
 * who consents connects their books to whoever sent them the link. Connect sets this random value
 * as an HttpOnly cookie scoped to the provider's callback path; the state row keeps its hash.
 */
export const BINDING_TTL_SECONDS = 600;

export function newBrowserBinding(): { binding: string; hash: string } {
  const binding = randomBytes(32).toString('base64url');
  return { binding, hash: sha256(binding) };
}

export function bindingCookieName(provider: string): string {
  return `kosh_oauth_${provider}`;
}

/** The Set-Cookie of a connect answer; `Secure` where Kosh is served over https. */
export function bindingCookie(provider: string, binding: string, publicUrl: string, callbackPath: string): string {
  const secure = publicUrl.startsWith('https:') ? '; Secure' : '';
  // SameSite=Lax: the provider's redirect is a top-level GET from another site, which Lax allows.
  return `${bindingCookieName(provider)}=${binding}; Path=${callbackPath}; Max-Age=${BINDING_TTL_SECONDS}; HttpOnly; SameSite=Lax${secure}`;
}

/** Whether the callback's cookie is the one its state was bound to (constant time). */
export function bindingMatches(storedHash: string | null, presented: string | undefined): boolean {
  if (!storedHash || !presented || !/^[A-Za-z0-9_-]{43}$/.test(presented)) return false;
  return sameSecret(sha256(presented), storedHash);
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
