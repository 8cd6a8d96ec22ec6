/**
 * The dashboard's only way to the server: the typed client generated from /openapi.json
 * (clients/typescript), authenticated by the session cookie (same origin). Every write carries an
 * Idempotency-Key (the client adds a UUID, kept across its retries) and the X-CSRF-Token the
 * server set in the `kosh_csrf` cookie at sign-in.
 */
import { createKoshClient, newIdempotencyKey, type KoshError, type Schema } from '../../clients/typescript/src/index.ts';

export type { Schema };
export { newIdempotencyKey };

/** The request option that sends an action's own idempotency key (see ActionForm). */
export function idem(key: string): { headers: Record<string, string> } {
  return { headers: { 'Idempotency-Key': key } };
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A development aid only: an API key typed on the sign-in page (kept in this tab's sessionStorage). */
const API_KEY_STORAGE = 'kosh.dashboard.api_key';

export function apiKey(): string | null {
  return sessionStorage.getItem(API_KEY_STORAGE);
}
export function setApiKey(key: string | null): void {
  if (key) sessionStorage.setItem(API_KEY_STORAGE, key);
  else sessionStorage.removeItem(API_KEY_STORAGE);
}

export function csrfToken(): string | null {
  const match = /(?:^|;\s*)kosh_csrf=([^;]+)/.exec(document.cookie);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

function authHeaders(method: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const key = apiKey();
  if (key) headers.authorization = `Bearer ${key}`;
  else if (MUTATING.has(method)) {
    const token = csrfToken();
    if (token) headers['x-csrf-token'] = token;
  }
  return headers;
}

/** The typed client: the session cookie goes along (same origin), the CSRF header is added per request. */
export const kosh = createKoshClient({
  baseUrl: window.location.origin,
  retry: { retries: 1 },
  fetch: (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    for (const [name, value] of Object.entries(authHeaders(request.method))) request.headers.set(name, value);
    return fetch(request, { credentials: 'same-origin' });
  },
});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly reason: string | undefined,
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** Turns an openapi-fetch answer into its data or a thrown ApiError with the server's message. */
/**
 * The answer's data, or the API's refusal thrown as an ApiError. Routes that can also answer CSV
 * (`format=csv`) are typed `string | …`; the dashboard asks for JSON, so the string is left out.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): Exclude<T, string> {
  if (result.error !== undefined || !result.response.ok) throw toApiError(result.response.status, result.error);
  return result.data as Exclude<T, string>;
}

function toApiError(status: number, body: unknown): ApiError {
  const envelope = (body as Partial<KoshError> | undefined)?.error as { code?: string; message?: string; reason?: string; request_id?: string } | undefined;
  return new ApiError(status, envelope?.code ?? 'error', envelope?.reason, envelope?.message ?? `request failed (${status})`, envelope?.request_id);
}

/**
 * A plain JSON call for the operator routes (auth, users, audit log), with the same headers as
 * the typed client: Idempotency-Key on writes, X-CSRF-Token for the session.
 */
export async function call<T = unknown>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...authHeaders(method) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (MUTATING.has(method)) headers['idempotency-key'] = idempotencyKey ?? newIdempotencyKey();
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw toApiError(response.status, parsed);
  return parsed as T;
}

export type Role = 'owner' | 'admin' | 'finance' | 'support' | 'viewer';

export type Me = {
  user: { id: string; email: string; name: string | null; role: Role; totp_enabled: boolean; created_at: string };
  tenant: { id: string; name: string };
  csrf_token?: string;
  /** Signed in with an API key (development): full rights. */
  viaApiKey?: boolean;
};

const RANK: Record<Role, number> = { viewer: 0, support: 1, finance: 2, admin: 3, owner: 4 };

/** Which role a kind of action needs (the server enforces the same table; the dashboard only hides what would be refused). */
export const NEEDS = {
  customers: 'support',
  portal: 'support',
  send: 'support',
  money: 'finance',
  admin: 'admin',
  owner: 'owner',
} as const satisfies Record<string, Role>;

export function can(me: Me | null, what: keyof typeof NEEDS): boolean {
  if (!me) return false;
  return RANK[me.user.role] >= RANK[NEEDS[what]];
}

export type ListPage<T> = { data: T[]; has_more: boolean; total_count: number };

/** The deployment as the dashboard needs it (GET /dashboard/config.json, no sign-in needed). */
export type Deployment = { mode: 'test' | 'live'; mail_configured: boolean };
let deployment: Promise<Deployment> | null = null;
export function loadDeployment(): Promise<Deployment> {
  deployment ??= fetch('/dashboard/config.json', { credentials: 'same-origin' }).then(async (r) => {
    if (!r.ok) throw new Error(`config ${r.status}`);
    return (await r.json()) as Deployment;
  });
  deployment.catch(() => (deployment = null));
  return deployment;
}
