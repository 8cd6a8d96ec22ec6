import { createHash, randomBytes } from 'node:crypto';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Page } from '../../platform/http/envelope.js';
import { toIso } from '../../platform/time.js';
import { checkCurrency, dayOf, liveMrrByCurrency, mrrOnDay } from '../analytics/index.js';
import { convertMinorUnits } from '../../platform/money.js';
import { formatRate, parseRate } from './fx.js';
import {
  allMembers,
  findOrganizationByJoinCode,
  findOrganizationOfMember,
  insertOrganization,
  listFxRates,
  listMembers,
  lockTenant,
  organizationIdOfTenant,
  ratesInForce,
  setMembership,
  updateJoinCode,
  upsertFxRate,
  type FxRateRow,
  type MemberRow,
  type OrganizationRow,
} from './organizations.repository.js';

/**
 * Organizations group tenants for consolidated reporting (SPEC 4.13, 4.16; docs/decisions/0076).
 * A tenant belongs to at most one organization and can only attach or detach itself. Another
 * tenant joins with the join code a member hands over; without it — or from outside — an
 * organization answers exactly like one that does not exist (404).
 */

function hashJoinCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

function newJoinCode(): string {
  return `orgjoin_${randomBytes(18).toString('base64url')}`;
}

export function toOrganization(row: OrganizationRow, joinCode?: string) {
  return {
    id: row.id,
    name: row.name,
    reporting_currency: row.reporting_currency,
    ...(joinCode ? { join_code: joinCode } : {}),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toMember(row: MemberRow) {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    data_region: row.data_region,
    base_currency: row.base_currency,
    organization_id: row.organization_id,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

async function memberOrganization(ctx: ReadCtx, organizationId: string): Promise<OrganizationRow> {
  const org = await findOrganizationOfMember(ctx.tx, ctx.tenantId, organizationId);
  if (!org) throw errors.notFound('organization');
  return org;
}

async function joinOrganization(ctx: Ctx, organizationId: string): Promise<MemberRow> {
  const tenant = await lockTenant(ctx.tx, ctx.tenantId);
  if (tenant?.organization_id && tenant.organization_id !== organizationId) {
    throw errors.conflict('this tenant already belongs to another organization; leave it first', 'already_in_organization');
  }
  return setMembership(ctx.tx, ctx.tenantId, organizationId, ctx.now);
}

export async function createOrganization(ctx: Ctx, input: { name: string; reporting_currency: string }) {
  const joinCode = newJoinCode();
  const org = await insertOrganization(ctx.tx, {
    id: newId(),
    name: input.name,
    reporting_currency: checkCurrency(input.reporting_currency, 'reporting_currency'),
    join_code_hash: hashJoinCode(joinCode),
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  await joinOrganization(ctx, org.id);
  return toOrganization(org, joinCode);
}

export async function getOrganization(ctx: ReadCtx, organizationId: string) {
  return toOrganization(await memberOrganization(ctx, organizationId));
}

/** The calling tenant's organization, as a list of zero or one. */
export async function listOwnOrganizations(ctx: ReadCtx) {
  const organizationId = await organizationIdOfTenant(ctx.tx, ctx.tenantId);
  if (!organizationId) return [];
  const org = await findOrganizationOfMember(ctx.tx, ctx.tenantId, organizationId);
  return org ? [toOrganization(org)] : [];
}

export async function rotateJoinCode(ctx: Ctx, organizationId: string) {
  const org = await memberOrganization(ctx, organizationId);
  const joinCode = newJoinCode();
  await updateJoinCode(ctx.tx, org.id, hashJoinCode(joinCode), ctx.now);
  return { ...toOrganization({ ...org, updated_at: ctx.now }), join_code: joinCode };
}

/** Attaches the calling tenant (never another one) to the organization the join code opens. */
export async function attachSelf(ctx: Ctx, organizationId: string, joinCode: string) {
  // A member attaching itself again is a no-op that needs no code.
  const org =
    (await findOrganizationOfMember(ctx.tx, ctx.tenantId, organizationId)) ??
    (await findOrganizationByJoinCode(ctx.tx, organizationId, hashJoinCode(joinCode)));
  if (!org) throw errors.notFound('organization');
  return toMember(await joinOrganization(ctx, org.id));
}

/** Leaves: only the calling tenant may detach itself. */
export async function detachSelf(ctx: Ctx, organizationId: string, tenantId: string) {
  await memberOrganization(ctx, organizationId);
  if (tenantId !== ctx.tenantId) throw errors.notFound('tenant');
  await lockTenant(ctx.tx, ctx.tenantId);
  return toMember(await setMembership(ctx.tx, ctx.tenantId, null, ctx.now));
}

export async function listOrganizationTenants(ctx: ReadCtx, organizationId: string, page: Page) {
  const org = await memberOrganization(ctx, organizationId);
  const { rows, total } = await listMembers(ctx.tx, org.id, page);
  return { tenants: rows.map(toMember), total };
}

function toFxRate(row: FxRateRow) {
  return { currency: row.currency, rate: formatRate(row.rate), effective_date: row.effective_date, created_at: toIso(row.created_at) };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function checkDay(value: string, field: string): string {
  const date = new Date(`${value}T00:00:00Z`);
  if (!DAY.test(value) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value || date.getUTCFullYear() < 1970) {
    throw errors.invalidField(field, 'must be a date YYYY-MM-DD from 1970 on');
  }
  return value;
}

export async function setFxRate(ctx: Ctx, organizationId: string, currency: string, input: { rate: string | number; effective_date?: string }) {
  const org = await memberOrganization(ctx, organizationId);
  const code = checkCurrency(currency, 'currency');
  const text = typeof input.rate === 'number' ? String(input.rate) : input.rate;
  try {
    parseRate(text);
  } catch (error) {
    throw errors.invalidField('rate', (error as Error).message);
  }
  const row = await upsertFxRate(ctx.tx, {
    organization_id: org.id,
    currency: code,
    effective_date: input.effective_date ? checkDay(input.effective_date, 'effective_date') : dayOf(ctx.now),
    rate: text,
    created_at: ctx.now,
  });
  return toFxRate(row);
}

export async function getFxRates(ctx: ReadCtx, organizationId: string) {
  const org = await memberOrganization(ctx, organizationId);
  return (await listFxRates(ctx.tx, org.id)).map(toFxRate);
}

/**
 * Consolidated MRR (SPEC 4.16): each member's MRR per currency from its last snapshot on or before
 * `date`, converted at the organization's rate in force on that date. A currency without a rate is
 * listed under `missing_rates` and the totals it would feed are null — never guessed.
 */
/**
 * Each member's MRR per currency on a day: today's is computed on read from the subscriptions as
 * they are now (as a tenant's own open month is, decision 0451), a past day's is its last snapshot.
 */
async function memberMrr(
  ctx: ReadCtx,
  members: { id: string }[],
  day: string,
): Promise<{ tenant_id: string; currency: string; mrr: number; snapshot_date: string | null }[]> {
  if (day !== dayOf(ctx.now))
    return mrrOnDay(
      ctx.tx,
      members.map((m) => m.id),
      day,
    );
  const live: { tenant_id: string; currency: string; mrr: number; snapshot_date: string | null }[] = [];
  for (const member of members) {
    for (const row of await liveMrrByCurrency(ctx.tx, member.id, ctx.now)) live.push({ tenant_id: member.id, ...row, snapshot_date: null });
  }
  return live;
}

export async function consolidatedMrr(ctx: ReadCtx, organizationId: string, query: { date?: string }) {
  const org = await memberOrganization(ctx, organizationId);
  const day = query.date ? checkDay(query.date, 'date') : dayOf(ctx.now);
  const members = await allMembers(ctx.tx, org.id);
  // One read fans out to every member tenant by tenant_id (docs/decisions/0076 for Citus).
  const [snapshots, rates] = await Promise.all([memberMrr(ctx, members, day), ratesInForce(ctx.tx, org.id, day)]);
  const rateOf = new Map(rates.map((r) => [r.currency, r]));
  const missing = new Map<string, string[]>();
  const tenants = members.map((member) => {
    const currencies = snapshots
      .filter((s) => s.tenant_id === member.id)
      .map((s) => {
        const rate = s.currency === org.reporting_currency ? '1' : rateOf.get(s.currency)?.rate;
        if (rate === undefined) missing.set(s.currency, [...(missing.get(s.currency) ?? []), member.id]);
        return {
          currency: s.currency,
          mrr: s.mrr,
          snapshot_date: s.snapshot_date,
          rate: rate === undefined ? null : formatRate(rate),
          mrr_reporting: rate === undefined ? null : convertMinorUnits(s.mrr, s.currency, org.reporting_currency, rate),
        };
      });
    const complete = currencies.every((c) => c.mrr_reporting !== null);
    return {
      tenant_id: member.id,
      name: member.name,
      mrr_reporting: complete ? currencies.reduce((sum, c) => sum + (c.mrr_reporting ?? 0), 0) : null,
      currencies,
    };
  });
  const total = tenants.every((t) => t.mrr_reporting !== null) ? tenants.reduce((sum, t) => sum + (t.mrr_reporting ?? 0), 0) : null;
  return {
    organization_id: org.id,
    reporting_currency: org.reporting_currency,
    date: day,
    total_mrr: total,
    tenants,
    missing_rates: [...missing.entries()].map(([currency, tenantIds]) => ({ currency, tenant_ids: tenantIds })),
  };
}
