import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { DB } from '../../platform/db/schema.js';
import { emitEvent } from '../../platform/events/events.js';
import { RetryJobAt } from '../../platform/jobs/jobs.js';
import { findConnection, takeRefreshLease, updateConnection, type ConnectionRow } from './accounting.repository.js';
import { tokenAad, toConnection, type AccountingEnv } from './accounting.service.js';
import { transitionConnection } from './accounting.states.js';
import { refreshTokens } from './oauth.js';
import { ProviderError } from './providers/http.js';
import { adapters } from './providers/index.js';

/** Refresh this long before the access token expires, so a sync never starts on a dying token. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
/** How long a worker may hold the refresh lease (a token call times out well before). */
export const REFRESH_LEASE_MS = 60_000;
/** When another worker holds the lease, come back after this long. */
export const LEASE_RETRY_MS = 5_000;

export type TokenEnv = AccountingEnv & { db: Kysely<DB>; clock: Clock };

/** The connection cannot sync until the tenant acts (reconnects): the sync pauses. */
export class ConnectionPaused extends Error {
  constructor(readonly status: string) {
    super(`the connection is ${status}`);
  }
}

type StoredTokens = { access_token: string; refresh_token: string };

function openTokens(env: AccountingEnv, row: ConnectionRow): StoredTokens {
  return env.secrets.openJson<StoredTokens>(row.tokens_sealed, tokenAad(row.tenant_id, row.id));
}

/**
 * A usable access token for the connection, refreshed when it is about to expire.
 *
 * Refresh tokens rotate (QuickBooks, Xero): spending one twice loses the connection. So a refresh
 * happens only under the lease (`takeRefreshLease`): a conditional UPDATE that succeeds for one
 * worker, and only while the tokens are still the version it read. The others re-read: either
 * the new token is there, or they retry shortly (RetryJobAt). No transaction is held open across
 * the call to the provider.
 */
export async function accessTokenFor(env: TokenEnv, connection: ConnectionRow): Promise<string> {
  const now = env.clock.now();
  if (connection.status !== 'active') throw new ConnectionPaused(connection.status);
  if (connection.access_expires_at.getTime() - now.getTime() > REFRESH_MARGIN_MS) return openTokens(env, connection).access_token;

  const leased = await takeRefreshLease(env.db, connection.tenant_id, connection.id, connection.token_version, now, new Date(now.getTime() + REFRESH_LEASE_MS));
  if (!leased) {
    const current = await findConnection(env.db, connection.tenant_id, connection.id);
    if (!current) throw new ConnectionPaused('disconnected');
    if (current.status !== 'active') throw new ConnectionPaused(current.status);
    if (current.token_version !== connection.token_version && current.access_expires_at.getTime() - now.getTime() > REFRESH_MARGIN_MS) {
      return openTokens(env, current).access_token;
    }
    throw new RetryJobAt(new Date(now.getTime() + LEASE_RETRY_MS), 'another worker is refreshing this connection’s token');
  }

  const adapter = adapters[leased.provider];
  const stored = openTokens(env, leased);
  let fresh;
  try {
    fresh = await refreshTokens(adapter, env.config.accounting[leased.provider], stored.refresh_token, now.getTime());
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'invalid_grant') {
      await env.db.transaction().execute(async (tx) => {
        const row = await transitionConnection(tx, leased.tenant_id, leased.id, 'grant_invalid', {
          refresh_lease_until: null,
          last_error: `refresh refused by ${leased.provider}: ${error.message}`.slice(0, 1000),
          updated_at: now,
        });
        if (row) await emitEvent({ tx, tenantId: row.tenant_id, now }, 'accounting.connection_failed', { ...toConnection(row), reason: 'invalid_grant' });
      });
      throw new ConnectionPaused('reconnect_required');
    }
    await updateConnection(env.db, leased.tenant_id, leased.id, { refresh_lease_until: null, updated_at: now });
    throw error;
  }
  await updateConnection(env.db, leased.tenant_id, leased.id, {
    tokens_sealed: env.secrets.sealJson({ access_token: fresh.access_token, refresh_token: fresh.refresh_token }, tokenAad(leased.tenant_id, leased.id)),
    access_expires_at: new Date(now.getTime() + fresh.expires_in * 1000),
    token_version: leased.token_version + 1,
    refresh_lease_until: null,
    updated_at: now,
  });
  return fresh.access_token;
}

/** The refresh token, for revocation. */
export function refreshTokenOf(env: AccountingEnv, tenantId: string, connectionId: string, sealed: string): string {
  return env.secrets.openJson<StoredTokens>(sealed, tokenAad(tenantId, connectionId)).refresh_token;
}
