import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../platform/db/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import type { CreatePlanBody, Plan, PriceInput } from './plans.schemas.js';
import { findPlan, insertPlan, listPlanRows, pricesOfPlans, type PlanFilter, type PlanRow, type PriceJson, type PriceRow } from './plans.repository.js';

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
      hsn_code: p.hsn_code ?? null,
      created_at: toIso(p.created_at),
    })),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

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
  const prices = priceInputs.map((p: PriceInput) => {
    const tiers = p.tiers ? p.tiers.map((t) => ({ up_to: t.up_to, unit_amount: t.unit_amount, flat_amount: t.flat_amount ?? 0 })) : null;
    return {
      tenant_id: ctx.tenantId,
      id: newId(),
      plan_id: id,
      currency: p.currency,
      amount: p.amount ?? 0,
      type: 'recurring',
      billing_scheme: p.billing_scheme,
      tiers_mode: tiers ? (p.tiers_mode ?? 'graduated') : null,
      tiers,
      package_size: tiers ? null : (p.package_size ?? null),
      metric_code: p.metric_code ?? null,
      hsn_code: p.hsn_code ?? null,
      created_at: ctx.now,
    };
  });
  const metricCodes = [...new Set(prices.flatMap((p) => (p.metric_code ? [p.metric_code] : [])))];
  const rows = prices.map((p) => ({ ...p, tiers: p.tiers ? JSON.stringify(p.tiers) : null }));
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

export async function getPlan(ctx: Ctx, id: string): Promise<Plan> {
  const row = await findPlan(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('plan');
  return toPlan(row, await pricesOfPlans(ctx.tx, ctx.tenantId, [id], 'all'));
}

export async function listPlans(ctx: Ctx, filter: PlanFilter, page: Page): Promise<{ plans: Plan[]; total: number }> {
  const { rows, total } = await listPlanRows(ctx.tx, ctx.tenantId, filter, page);
  return { plans: rows.map((r) => toPlan(r, r.price_rows)), total };
}
