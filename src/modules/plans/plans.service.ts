import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../platform/db/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import type { DimensionPrice } from './pricing.js';
import type { CreatePlanBody, CreatePriceBody, Plan, PriceInput, UpdatePlanBody } from './plans.schemas.js';
import {
  archivePriceRow,
  findPlan,
  insertPlan,
  insertPrice,
  listPlanRows,
  lockPlan,
  pricesOfPlans,
  updatePlanRow,
  type PlanFilter,
  type PlanRow,
  type PriceJson,
  type PriceRow,
} from './plans.repository.js';

export function toPlan(row: PlanRow, prices: Array<PriceRow | PriceJson>): Plan {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    code: row.code,
    description: row.description,
    interval_unit: row.interval_unit,
    interval: row.interval_unit,
    interval_count: row.interval_count,
    trial_days: row.trial_days,
    active: row.active,
    hsn_code: row.hsn_code,
    tax_rate_bp: row.tax_rate_bp,
    features: row.features,
    metadata: row.metadata,
    prices: prices.map((p) => ({
      id: p.id,
      plan_id: p.plan_id,
      currency: p.currency,
      amount: p.amount,
      type: p.type,
      billing_scheme: p.billing_scheme,
      tiers_mode: p.tiers_mode ?? null,
      tiers: p.tiers ?? null,
      package_size: p.package_size === null || p.package_size === undefined ? null : Number(p.package_size),
      metric_code: p.metric_code ?? null,
      dimension_prices: p.dimension_prices ?? null,
      hsn_code: p.hsn_code ?? null,
      active: p.active,
      archived_at: p.archived_at === null ? null : toIso(p.archived_at),
      created_at: toIso(p.created_at),
    })),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** A new active price of a plan, as a row (tiers as objects; storedPrice serializes them). */
function newPriceRow(ctx: Ctx, planId: string, p: PriceInput) {
  const tiers = p.tiers ? p.tiers.map((t) => ({ up_to: t.up_to, unit_amount: t.unit_amount, flat_amount: t.flat_amount ?? 0 })) : null;
  return {
    tenant_id: ctx.tenantId,
    id: newId(),
    plan_id: planId,
    currency: p.currency,
    amount: p.amount ?? 0,
    type: 'recurring',
    billing_scheme: p.billing_scheme,
    tiers_mode: tiers ? (p.tiers_mode ?? 'graduated') : null,
    tiers,
    package_size: tiers ? null : (p.package_size ?? null),
    metric_code: p.metric_code ?? null,
    dimension_prices: p.dimension_prices ? p.dimension_prices.map(storedDimensionPrice) : null,
    hsn_code: p.hsn_code ?? null,
    active: true,
    archived_at: null,
    created_at: ctx.now,
  };
}

/** A dimension price as stored: every field present, tiers with their flat amounts. */
function storedDimensionPrice(d: NonNullable<PriceInput['dimension_prices']>[number]): DimensionPrice {
  const tiers = d.tiers ? d.tiers.map((t) => ({ up_to: t.up_to, unit_amount: t.unit_amount, flat_amount: t.flat_amount ?? 0 })) : null;
  return {
    match: d.match,
    unit_amount: tiers ? null : (d.unit_amount ?? null),
    package_size: tiers ? null : (d.package_size ?? null),
    tiers_mode: tiers ? (d.tiers_mode ?? 'graduated') : null,
    tiers,
  };
}

const storedPrice = (p: ReturnType<typeof newPriceRow>) => ({
  ...p,
  tiers: p.tiers ? JSON.stringify(p.tiers) : null,
  dimension_prices: p.dimension_prices ? JSON.stringify(p.dimension_prices) : null,
});

/** A code derived from the name when the caller gives none (SPEC's second request shape). */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-')
    .replace(/-+/g, '-')
    .slice(0, 100);
  return slug || 'plan';
}

export async function createPlan(ctx: Ctx, input: CreatePlanBody): Promise<Plan> {
  const code = input.code ?? slugify(input.name);
  const id = newId();
  const plan = {
    tenant_id: ctx.tenantId,
    id,
    name: input.name,
    code,
    description: input.description ?? null,
    interval_unit: (input.interval_unit ?? input.interval)!,
    interval_count: input.interval_count,
    trial_days: input.trial_days,
    active: true,
    hsn_code: input.hsn_code,
    tax_rate_bp: input.tax_rate_bp ?? null,
    features: JSON.stringify(input.features),
    metadata: JSON.stringify(input.metadata),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  const priceInputs = [
    ...(input.amount !== undefined && input.currency
      ? ([{ amount: input.amount, currency: input.currency, billing_scheme: 'per_unit' as const }] as PriceInput[])
      : []),
    ...(input.prices ?? []),
  ];
  const prices = priceInputs.map((p) => newPriceRow(ctx, id, p));
  const metricCodes = [...new Set(prices.flatMap((p) => (p.metric_code ? [p.metric_code] : [])))];
  const rows = prices.map(storedPrice);
  await insertPlan(ctx.tx, plan, rows, (error) =>
    isUniqueViolation(error, 'plans_tenant_id_code_key')
      ? errors.conflict(`a plan with code '${code}' already exists`, 'plan_code_taken')
      : isForeignKeyViolation(error, 'prices_metric_fkey')
        ? errors.invalidField('prices', `a metered price names a metric_code that is not a billable metric (${metricCodes.join(', ')})`)
        : error,
  );
  const created = toPlan({ ...plan, features: input.features, metadata: input.metadata }, prices);
  await emitEvent(ctx, 'plan.created', created);
  return created;
}

export async function getPlan(ctx: ReadCtx, id: string): Promise<Plan> {
  const row = await findPlan(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('plan');
  return toPlan(row, await pricesOfPlans(ctx.tx, ctx.tenantId, [id], { scope: 'all' }));
}

export async function listPlans(ctx: ReadCtx, filter: PlanFilter, page: Page): Promise<{ plans: Plan[]; total: number }> {
  const { rows, total } = await listPlanRows(ctx.tx, ctx.tenantId, filter, page);
  return { plans: rows.map((r) => toPlan(r, r.price_rows)), total };
}

/** PATCH /v1/plans/{id}: name, description, features, metadata; `active: false` archives the plan (no new subscriptions). */
export async function updatePlan(ctx: Ctx, id: string, input: UpdatePlanBody): Promise<Plan> {
  const row = await updatePlanRow(ctx.tx, ctx.tenantId, id, {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.metadata !== undefined ? { metadata: JSON.stringify(input.metadata) } : {}),
    ...(input.features !== undefined ? { features: JSON.stringify(input.features) } : {}),
    ...(input.active !== undefined ? { active: input.active } : {}),
    updated_at: ctx.now,
  });
  if (!row) throw errors.notFound('plan');
  const plan = toPlan(row, await pricesOfPlans(ctx.tx, ctx.tenantId, [id]));
  await emitEvent(ctx, 'plan.updated', plan);
  return plan;
}

/**
 * POST /v1/plans/{id}/prices: prices are immutable, so a new amount is a new price. With `replace`
 * (the default) the active price in that currency is archived in the same transaction; running
 * subscriptions keep the price they reference until changed. The plan row is locked so that two
 * concurrent price changes of one plan queue (the partial unique index is the final guard).
 */
export async function addPrice(ctx: Ctx, planId: string, input: CreatePriceBody): Promise<Plan> {
  const plan = await lockPlan(ctx.tx, ctx.tenantId, planId);
  if (!plan) throw errors.notFound('plan');
  // The price it replaces: the active fixed price of the currency, or for a metered price the active one of its metric.
  const current = (await pricesOfPlans(ctx.tx, ctx.tenantId, [planId], { scope: 'all', activeOnly: true })).find(
    (p) => p.currency === input.currency && (p.metric_code ?? null) === (input.metric_code ?? null),
  );
  if (current) {
    if (!input.replace)
      throw errors.conflict(
        `plan ${plan.code} already has an active ${input.currency} price ${current.id}; archive it first or send replace: true`,
        'price_exists',
      );
    await archivePriceRow(ctx.tx, ctx.tenantId, planId, current.id, ctx.now);
  }
  const price = await insertPrice(ctx.tx, storedPrice(newPriceRow(ctx, planId, input)));
  const updated = await updatePlanRow(ctx.tx, ctx.tenantId, planId, { updated_at: ctx.now });
  const result = toPlan(updated!, await pricesOfPlans(ctx.tx, ctx.tenantId, [planId], { scope: 'all' }));
  if (current)
    await emitEvent(
      ctx,
      'price.archived',
      result.prices.find((p) => p.id === current.id)!,
    );
  await emitEvent(
    ctx,
    'price.created',
    result.prices.find((p) => p.id === price.id)!,
  );
  return result;
}

/** POST /v1/plans/{id}/prices/{price_id}/archive: no new subscription or invoice uses it; running subscriptions keep it. */
export async function archivePrice(ctx: Ctx, planId: string, priceId: string): Promise<Plan> {
  const plan = await lockPlan(ctx.tx, ctx.tenantId, planId);
  if (!plan) throw errors.notFound('plan');
  const archived = await archivePriceRow(ctx.tx, ctx.tenantId, planId, priceId, ctx.now);
  if (!archived) {
    // Every price of the plan, metered ones too (the default scope is the fixed prices only).
    const known = (await pricesOfPlans(ctx.tx, ctx.tenantId, [planId], { scope: 'all' })).some((p) => p.id === priceId);
    if (!known) throw errors.notFound('price');
    throw errors.conflict(`price ${priceId} is already archived`, 'price_archived');
  }
  const updated = await updatePlanRow(ctx.tx, ctx.tenantId, planId, { updated_at: ctx.now });
  const result = toPlan(updated!, await pricesOfPlans(ctx.tx, ctx.tenantId, [planId], { scope: 'all' }));
  await emitEvent(
    ctx,
    'price.archived',
    result.prices.find((p) => p.id === priceId)!,
  );
  return result;
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { findPlan, findPrice, pricesOfPlans } from './plans.repository.js';
