import type { Ctx } from '../../platform/context.js';
import { createPlan, type CreatePlanBody, type Plan } from '../../modules/plans/index.js';
import { assertDimensionKeysDeclared } from './price-dimensions.js';

/** POST /v1/plans: the plan and its prices, once each dimension price matches on its metric's dimensions. */
export async function createPlanWithPrices(ctx: Ctx, input: CreatePlanBody): Promise<Plan> {
  await assertDimensionKeysDeclared(
    ctx,
    (input.prices ?? []).map((price, i) => ({ at: `prices.${i}`, price })),
  );
  return createPlan(ctx, input);
}
