import type { Kysely } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { Config } from '../../platform/config.js';
import type { DB } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import {
  connectionsOf,
  consumeOAuthState,
  deleteConnection,
  findConnection,
  findConnectionByCompany,
  insertConnection,
  insertOAuthState,
  insertSyncRun,
  latestSyncRuns,
  listConnectionRows,
  listSyncRecordRows,
  updateConnection,
  type ConnectionRow,
  type SyncRecordFilter,
  type SyncRecordRow,
  type SyncRunRow,
} from './accounting.repository.js';
import type { AccountingConnection, CallbackQuery, ConnectBody, SyncRun, TaxMappingBody } from './accounting.schemas.js';
import type { AccountingProvider, TaxMapping } from './accounting.tables.js';
import { transitionConnection } from './accounting.states.js';
import { authorizeUrl, bindingCookie, bindingMatches, exchangeCode, newBrowserBinding, newOAuthState, parseOAuthState, pkcePair } from './oauth.js';
import { adapters } from './providers/index.js';
import { ProviderError } from './providers/http.js';

/** What the accounting module needs beyond a transaction: provider settings and the secret box. */
export type AccountingEnv = { config: Config; secrets: SecretBox };

/** How long a connect flow's state stays valid (DESIGN §16). */
export const STATE_TTL_SECONDS = 600;

export const SYNC_JOB = 'accounting.sync';
export const REVOKE_JOB = 'accounting.revoke_token';

export function tokenAad(tenantId: string, connectionId: string): string {
  return `tenant:${tenantId}:accounting:${connectionId}`;
}

function verifierAad(tenantId: string, stateId: string): string {
  return `tenant:${tenantId}:accounting-state:${stateId}`;
}

/** Kosh's own callback, registered with each provider as the OAuth redirect URI. */
export function callbackUrl(config: Config, provider: AccountingProvider): string {
  return `${config.publicUrl.replace(/\/$/, '')}/v1/accounting/callback/${provider}`;
}

/** The connection's mapping: the provider's India defaults with the tenant's overrides on top. */
export function effectiveMapping(provider: AccountingProvider, stored: Partial<TaxMapping>): TaxMapping {
  const defaults = adapters[provider].defaultMapping;
  return {
    tax_codes: { ...defaults.tax_codes, ...(stored.tax_codes ?? {}) },
    accounts: { ...defaults.accounts, ...(stored.accounts ?? {}) },
    item: stored.item ?? defaults.item,
  };
}

export function toConnection(row: ConnectionRow): AccountingConnection {
  return {
    id: row.id,
    object: 'accounting_connection',
    tenant_id: row.tenant_id,
    provider: row.provider,
    status: row.status,
    external_tenant_id: row.external_tenant_id,
    external_tenant_name: row.external_tenant_name,
    tax_mapping: effectiveMapping(row.provider, row.tax_mapping),
    last_error: row.last_error,
    last_synced_at: toIsoOrNull(row.last_synced_at),
    connected_at: toIso(row.connected_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toSyncRun(row: SyncRunRow, provider: AccountingProvider): SyncRun {
  return {
    id: row.id,
    object: 'accounting_sync_run',
    connection_id: row.connection_id,
    provider,
    status: row.status,
    synced: row.synced,
    failed: row.failed,
    skipped: row.skipped,
    last_error: row.last_error,
    started_at: toIsoOrNull(row.started_at),
    finished_at: toIsoOrNull(row.finished_at),
    created_at: toIso(row.created_at),
  };
}

function toSyncRecord(row: SyncRecordRow) {
  return {
    id: row.id,
    object: 'accounting_sync_record' as const,
    connection_id: row.connection_id,
    record_type: row.record_type,
    record_id: row.record_id,
    external_id: row.external_id,
    status: row.status,
    last_error: row.last_error,
    attempts: row.attempts,
    synced_at: toIsoOrNull(row.synced_at),
    updated_at: toIso(row.updated_at),
  };
}

/** `redirect_uri` lands on Kosh's own origin (KOSH_PUBLIC_URL), never elsewhere: no open redirect. */
function landingUri(config: Config, requested: string | undefined): string {
  const origin = new URL(config.publicUrl).origin;
  if (requested === undefined) return `${config.publicUrl.replace(/\/$/, '')}/dashboard/settings/accounting`;
  if (new URL(requested).origin !== origin) throw errors.invalidField('redirect_uri', `must be on ${origin} (KOSH_PUBLIC_URL)`);
  return requested;
}

/**
 * SPEC 4.12: starts the authorization-code flow with PKCE. The state row (hash of the state,
 * sealed verifier, where to send the browser back, hash of the browser binding) is what the
 * callback consumes, once. `setCookie` carries the binding to the browser that called.
 */
export async function startConnect(ctx: Ctx, env: AccountingEnv, provider: AccountingProvider, input: ConnectBody) {
  const config = env.config.accounting[provider];
  if (!config.clientId || !config.clientSecret) {
    throw errors.unavailable(`${provider} is not configured on this deployment (set its client id and secret)`, 'provider_not_configured');
  }
  const redirectUri = landingUri(env.config, input.redirect_uri);
  const id = newId();
  const { state, hash } = newOAuthState(ctx.tenantId);
  const { verifier, challenge } = pkcePair();
  const { binding, hash: bindingHash } = newBrowserBinding();
  await insertOAuthState(ctx.tx, {
    tenant_id: ctx.tenantId,
    id,
    provider,
    state_hash: hash,
    code_verifier_sealed: env.secrets.seal(verifier, verifierAad(ctx.tenantId, id)),
    redirect_uri: redirectUri,
    client_state: input.state ?? null,
    binding_hash: bindingHash,
    expires_at: new Date(ctx.now.getTime() + STATE_TTL_SECONDS * 1000),
    created_at: ctx.now,
  });
  const callback = callbackUrl(env.config, provider);
  return {
    answer: { auth_url: authorizeUrl(adapters[provider], config, callback, state, challenge), provider, expires_in: STATE_TTL_SECONDS },
    setCookie: bindingCookie(provider, binding, env.config.publicUrl, new URL(callback).pathname),
  };
}

/** Where the callback sends the browser: the caller's redirect_uri with the outcome and its state. */
function landing(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v != null) url.searchParams.set(k, v);
  return url.toString();
}

/**
 * The provider's redirect. The state is consumed first, in its own transaction, so a replay is
 * refused even while this one is still exchanging the code; network calls (token exchange, the
 * company lookup) happen outside any transaction; the connection is stored last. A used,
 * expired, foreign or malformed state is a 400 and stores nothing. Provider failures send the
 * browser back with `error`, never a 500.
 */
export async function completeConnect(
  db: Kysely<DB>,
  env: AccountingEnv,
  now: Date,
  provider: AccountingProvider,
  query: CallbackQuery,
  binding: string | undefined,
): Promise<{ location: string }> {
  const parsed = query.state ? parseOAuthState(query.state) : null;
  if (!parsed) throw errors.validation('the state is missing or malformed', [{ field: 'state', message: 'unknown state' }], 'invalid_state');
  const stateRow = await db.transaction().execute((tx) => consumeOAuthState(tx, parsed.tenantId, parsed.hash, provider, now));
  if (!stateRow)
    throw errors.validation(
      'the state is unknown, used or expired; start the connection again',
      [{ field: 'state', message: 'unknown, used or expired' }],
      'invalid_state',
    );
  // Another browser than the one that started (RFC 6749 §10.12): refused, nothing is exchanged.
  if (!bindingMatches(stateRow.binding_hash, binding)) {
    throw errors.forbidden('this connection was started in another browser; start it again from the dashboard', 'oauth_binding_mismatch');
  }
  const back = (params: Record<string, string | null | undefined>) => ({
    location: landing(stateRow.redirect_uri, { ...params, state: stateRow.client_state }),
  });
  if (query.error) return back({ error: query.error, provider });
  if (!query.code) return back({ error: 'invalid_request', error_description: 'the provider sent no authorization code', provider });

  const adapter = adapters[provider];
  const config = env.config.accounting[provider];
  let tokens;
  let company;
  try {
    const verifier = env.secrets.open(stateRow.code_verifier_sealed, verifierAad(stateRow.tenant_id, stateRow.id));
    tokens = await exchangeCode(adapter, config, query.code, callbackUrl(env.config, provider), verifier, now.getTime());
    company = await adapter.pickCompany(config, tokens.access_token, { realmId: query.realmId }, now.getTime());
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    return back({ error: 'connection_failed', error_description: error.message.slice(0, 300), provider });
  }

  const tenantId = stateRow.tenant_id;
  const connection = await db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId, now };
    const existing = await findConnectionByCompany(tx, tenantId, provider, company.id);
    const id = existing?.id ?? newId();
    const sealed = env.secrets.sealJson({ access_token: tokens.access_token, refresh_token: tokens.refresh_token }, tokenAad(tenantId, id));
    const tokenFields = {
      tokens_sealed: sealed,
      access_expires_at: new Date(now.getTime() + tokens.expires_in * 1000),
      refresh_lease_until: null,
      external_tenant_name: company.name,
      last_error: null,
      connected_at: now,
      updated_at: now,
    };
    let row: ConnectionRow | undefined;
    if (existing) {
      // Connecting the same company again replaces the tokens and resumes a paused connection.
      row = await transitionConnection(tx, tenantId, id, 'reconnected', { ...tokenFields, token_version: existing.token_version + 1 });
    } else {
      const fresh = {
        tenant_id: tenantId,
        id,
        provider,
        status: 'active' as const,
        external_tenant_id: company.id,
        token_version: 0,
        tax_mapping: '{}',
        created_at: now,
        ...tokenFields,
      };
      await insertConnection(tx, fresh);
      row = { ...fresh, tax_mapping: {}, last_synced_at: null, sync_lease_until: null };
    }
    if (!row) throw errors.conflict('the connection changed while connecting; try again');
    const api = toConnection(row);
    await emitEvent(ctx, 'accounting.connected', api);
    return api;
  });
  return back({ connection_id: connection.id, provider, status: 'connected' });
}

export async function listConnections(ctx: ReadCtx, page: Page) {
  const { rows, total } = await listConnectionRows(ctx.tx, ctx.tenantId, page);
  return { connections: rows.map(toConnection), total };
}

async function connectionOf(ctx: ReadCtx, id: string): Promise<ConnectionRow> {
  const row = await findConnection(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('accounting connection');
  return row;
}

/**
 * Disconnects: the row and its external-id map go in this transaction; the token is revoked at
 * the provider by a job (no network call inside a transaction). The job carries the sealed token.
 */
export async function disconnect(ctx: Ctx, id: string) {
  const row = await deleteConnection(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('accounting connection');
  await enqueueJob(ctx.tx, ctx.now, {
    kind: REVOKE_JOB,
    tenantId: ctx.tenantId,
    payload: { connection_id: row.id, provider: row.provider, tokens_sealed: row.tokens_sealed },
    maxAttempts: 5,
  });
  await emitEvent(ctx, 'accounting.disconnected', { ...toConnection(row), status: row.status });
  return { id: row.id, deleted: true as const };
}

export async function updateTaxMapping(ctx: Ctx, id: string, input: TaxMappingBody) {
  const row = await connectionOf(ctx, id);
  const stored = row.tax_mapping;
  const next: Partial<TaxMapping> = {
    ...stored,
    ...(input.tax_codes ? { tax_codes: { ...(stored.tax_codes ?? {}), ...input.tax_codes } } : {}),
    ...(input.accounts ? { accounts: { ...effectiveMapping(row.provider, stored).accounts, ...input.accounts } } : {}),
    ...(input.item !== undefined ? { item: input.item } : {}),
  };
  const updated = await updateConnection(ctx.tx, ctx.tenantId, id, { tax_mapping: JSON.stringify(next), updated_at: ctx.now });
  if (!updated) throw errors.notFound('accounting connection');
  return toConnection(updated);
}

/**
 * Queues one sync run per connection asked for. A connection that needs reconnecting is refused
 * (409) when named, skipped otherwise; with none to sync the answer is 409 too.
 */
export async function startSync(ctx: Ctx, connectionId: string | undefined) {
  const connections = connectionId ? [await connectionOf(ctx, connectionId)] : await connectionsOf(ctx.tx, ctx.tenantId);
  if (connectionId && connections[0]!.status !== 'active') {
    throw errors.conflict(`the connection is ${connections[0]!.status}; connect again to resume syncing`, `connection_${connections[0]!.status}`);
  }
  const active = connections.filter((c) => c.status === 'active');
  if (active.length === 0) throw errors.conflict('no active accounting connection to sync', 'no_active_connection');
  const runs: SyncRun[] = [];
  for (const c of active) {
    const run = {
      tenant_id: ctx.tenantId,
      id: newId(),
      connection_id: c.id,
      status: 'queued' as const,
      synced: 0,
      failed: 0,
      skipped: 0,
      last_error: null,
      started_at: null,
      finished_at: null,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    await insertSyncRun(ctx.tx, run);
    await enqueueJob(ctx.tx, ctx.now, { kind: SYNC_JOB, tenantId: ctx.tenantId, payload: { connection_id: c.id, run_id: run.id }, maxAttempts: 25 });
    runs.push(toSyncRun(run, c.provider));
  }
  return runs;
}

export async function syncStatus(ctx: ReadCtx, filter: SyncRecordFilter, page: Page) {
  if (filter.connection_id) await connectionOf(ctx, filter.connection_id);
  const { rows, total } = await listSyncRecordRows(ctx.tx, ctx.tenantId, filter, page);
  const connections = filter.connection_id ? [await connectionOf(ctx, filter.connection_id)] : await connectionsOf(ctx.tx, ctx.tenantId);
  const providerOf = new Map(connections.map((c) => [c.id, c.provider]));
  const runs = await latestSyncRuns(ctx.tx, ctx.tenantId, [...providerOf.keys()]);
  return { records: rows.map(toSyncRecord), total, runs: runs.map((r) => toSyncRun(r, providerOf.get(r.connection_id)!)) };
}
