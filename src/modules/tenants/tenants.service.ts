import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import { generateApiKey, type KeyMode } from '../../platform/auth/api-keys.js';
import { assertMayGrant, type Actor, type Role } from '../../platform/auth/actor.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { getPrimaryEntity, updateEntity } from '../entities/index.js';
import type { ApiKey, NewApiKey, RegisterBody, Tenant, TenantSettings, UpdateSettingsBody } from './tenants.schemas.js';
import {
  countTenantsInMode,
  findApiKeyRow,
  findSettings,
  findTenant,
  insertApiKey,
  insertTenant,
  listApiKeyRows,
  revokeApiKeyRow,
  updateSettingsRow,
  type ApiKeyRow,
  type SettingsRow,
  type TenantRow,
} from './tenants.repository.js';

export function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    data_region: row.data_region,
    base_currency: row.base_currency,
    country_code: row.country_code,
    organization_id: row.organization_id,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    mode: row.mode,
    role: row.role,
    prefix: row.prefix,
    created_at: toIso(row.created_at),
    last_used_at: toIsoOrNull(row.last_used_at),
    revoked_at: toIsoOrNull(row.revoked_at),
  };
}

/** Creates the tenant row and its settings; the registration flow adds the entity and first key. */
export async function createTenantRecord(tx: Ctx['tx'], now: Date, input: RegisterBody, mode: KeyMode): Promise<Tenant> {
  const row: TenantRow = {
    id: newId(),
    name: input.name,
    email: input.email,
    data_region: input.data_region,
    base_currency: input.base_currency,
    country_code: input.country_code,
    organization_id: null,
    mode,
    created_at: now,
    updated_at: now,
  };
  await insertTenant(tx, row, {
    tenant_id: row.id,
    sac_code: input.sac_code ?? null,
    credit_note_approval_required: false,
    referral_window_days: 30,
    referral_reward_amount: 0,
    invoice_due_days: 30,
    created_at: now,
    updated_at: now,
  });
  return toTenant(row);
}

export async function getTenant(ctx: ReadCtx): Promise<Tenant> {
  const row = await findTenant(ctx.tx, ctx.tenantId);
  if (!row) throw errors.notFound('tenant');
  return toTenant(row);
}

/**
 * A new key; the secret is in the answer and nowhere else (only its hash is stored). Its mode is
 * the tenant's: asking for the other mode is a 400 (a test-mode tenant never holds an sk_live_ key).
 * Its role is admin unless asked otherwise, and never above the role of `issuer` (decision 0220):
 * a key minted by an admin cannot make its holder an owner.
 */
export async function issueApiKey(
  ctx: Ctx,
  issuer: Actor,
  input: { name?: string | undefined; mode?: KeyMode | undefined; role?: Role | undefined },
): Promise<NewApiKey> {
  const role = input.role ?? 'admin';
  assertMayGrant(issuer, role);
  const tenant = await findTenant(ctx.tx, ctx.tenantId);
  if (!tenant) throw errors.notFound('tenant');
  if (input.mode !== undefined && input.mode !== tenant.mode) {
    throw errors.invalidField('mode', `this is a ${tenant.mode}-mode tenant; its keys are ${tenant.mode}-mode keys`);
  }
  const mode = tenant.mode;
  const { key, prefix, hash } = generateApiKey(mode);
  const row: ApiKeyRow = {
    id: newId(),
    tenant_id: ctx.tenantId,
    name: input.name ?? '',
    mode,
    prefix,
    key_hash: hash,
    role,
    created_at: ctx.now,
    last_used_at: null,
    revoked_at: null,
  };
  await insertApiKey(ctx.tx, row);
  return { ...toApiKey(row), key };
}

export async function listApiKeys(ctx: ReadCtx): Promise<ApiKey[]> {
  return (await listApiKeyRows(ctx.tx, ctx.tenantId)).map(toApiKey);
}

/** Revoking a key is changing who holds its role: an admin cannot revoke an owner's key. */
export async function revokeApiKey(ctx: Ctx, revoker: Actor, id: string): Promise<ApiKey> {
  const current = await findApiKeyRow(ctx.tx, ctx.tenantId, id);
  if (!current) throw errors.notFound('API key');
  assertMayGrant(revoker, current.role);
  const row = await revokeApiKeyRow(ctx.tx, ctx.tenantId, id, ctx.now);
  if (!row) throw errors.notFound('API key');
  return toApiKey(row);
}

async function toSettings(ctx: ReadCtx, row: SettingsRow): Promise<TenantSettings> {
  // GSTIN and state are the primary legal entity's: one source of truth for the tenant's GST identity.
  const primary = await getPrimaryEntity(ctx);
  const tenant = await findTenant(ctx.tx, ctx.tenantId);
  return {
    tenant_id: row.tenant_id,
    tenant_name: tenant?.name ?? '',
    sac_code: row.sac_code,
    state_code: primary.state_code,
    gstin: primary.gstin,
    credit_note_approval_required: row.credit_note_approval_required,
    referral_window_days: row.referral_window_days,
    referral_reward_amount: row.referral_reward_amount,
    invoice_due_days: row.invoice_due_days,
    portal_cancellation: row.portal_cancellation,
    portal_plan_change: row.portal_plan_change,
    portal_quantity_change: row.portal_quantity_change,
    portal_billing_details: row.portal_billing_details,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function getSettings(ctx: ReadCtx): Promise<TenantSettings> {
  const row = await findSettings(ctx.tx, ctx.tenantId);
  if (!row) throw errors.notFound('settings');
  return toSettings(ctx, row);
}

/** The settings row as stored (for other modules: SAC code, approval governance, due days). */
export async function readSettings(ctx: ReadCtx): Promise<SettingsRow> {
  const row = await findSettings(ctx.tx, ctx.tenantId);
  if (!row) throw new Error(`tenant ${ctx.tenantId} has no settings row`);
  return row;
}

/** The portal permissions an update names (decision 0500); absent ones stay as they are. */
function portalPermissionsPatch(input: UpdateSettingsBody) {
  const keys = ['portal_cancellation', 'portal_plan_change', 'portal_quantity_change', 'portal_billing_details'] as const;
  return Object.fromEntries(keys.filter((key) => input[key] !== undefined).map((key) => [key, input[key]]));
}

export async function updateSettings(ctx: Ctx, input: UpdateSettingsBody): Promise<TenantSettings> {
  await findSettings(ctx.tx, ctx.tenantId, true);
  if (input.state_code !== undefined || input.gstin !== undefined) {
    const primary = await getPrimaryEntity(ctx);
    await updateEntity(ctx, primary.id, {
      ...(input.state_code !== undefined ? { state_code: input.state_code } : {}),
      ...(input.gstin !== undefined ? { gstin: input.gstin } : {}),
    });
  }
  const row = await updateSettingsRow(ctx.tx, ctx.tenantId, {
    ...(input.sac_code !== undefined ? { sac_code: input.sac_code } : {}),
    ...(input.credit_note_approval_required !== undefined ? { credit_note_approval_required: input.credit_note_approval_required } : {}),
    ...(input.referral_window_days !== undefined ? { referral_window_days: input.referral_window_days } : {}),
    ...(input.referral_reward_amount !== undefined ? { referral_reward_amount: input.referral_reward_amount } : {}),
    ...(input.invoice_due_days !== undefined ? { invoice_due_days: input.invoice_due_days } : {}),
    ...portalPermissionsPatch(input),
    updated_at: ctx.now,
  });
  return toSettings(ctx, row);
}

/** How many tenants a deployment (and its worker) of `mode` serves. */
export async function tenantsServedBy(db: Tx, mode: 'test' | 'live'): Promise<number> {
  return countTenantsInMode(db, mode);
}
