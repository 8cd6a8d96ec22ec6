import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { KeyMode } from '../../platform/auth/api-keys.js';
import type { Actor } from '../../platform/auth/actor.js';
import { createDefaultCampaign } from '../../modules/dunning/index.js';
import { createEntity } from '../../modules/entities/index.js';
import { createTenantRecord, issueApiKey, type NewApiKey, type RegisterBody, type Tenant } from '../../modules/tenants/index.js';
import { createOwner, type OwnerInput, type User } from '../../modules/operators/index.js';

const REGISTRATION: Actor = { type: 'system', id: null, label: 'registration' };

/**
 * Registration: the tenant, its settings, its primary legal entity (ledger 1) and its first API key,
 * in one transaction — a tenant never exists without an entity to invoice from or a key to call with.
 * With `owner`, the tenant's first operator (role owner) is made in the same transaction.
 */
export async function registerTenant(
  db: Kysely<DB>,
  now: Date,
  input: RegisterBody & { owner?: OwnerInput | undefined },
  mode: KeyMode,
): Promise<{ tenant: Tenant; api_key: NewApiKey; owner?: User }> {
  return db.transaction().execute(async (tx) => {
    const tenant = await createTenantRecord(tx, now, input, mode);
    const ctx = { tx, tenantId: tenant.id, now };
    await createEntity(
      ctx,
      {
        name: input.name,
        legal_name: input.name,
        invoice_prefix: input.invoice_prefix,
        country_code: input.country_code,
        state_code: input.state_code,
        gstin: input.gstin,
      },
      { primary: true },
    );
    // A sensible dunning campaign from the start, which the tenant can edit or replace.
    await createDefaultCampaign(ctx);
    // The key registration answers is the tenant's founding credential: an owner key (decision 0220).
    const apiKey = await issueApiKey(ctx, REGISTRATION, { name: 'default', mode, role: 'owner' });
    if (!input.owner) return { tenant, api_key: apiKey };
    return { tenant, api_key: apiKey, owner: await createOwner(ctx, input.owner) };
  });
}
