import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { CreatePriceBody } from '../../modules/plans/index.js';
import { metricsByCodes } from '../../modules/usage/index.js';

type DimensionalPrice = Pick<CreatePriceBody, 'metric_code' | 'dimension_prices'>;

/**
 * A metered price's `dimension_prices` may match only on dimensions its metric declares (decision
 * 0560): a key the metric does not name is refused with a 400 naming it and the metric's
 * dimensions, since usage grouped by it would silently fall to the default or go unpriced. `at` is
 * the field path of each price (`prices.0`, or '' for a lone price). A metric that does not exist
 * is left to the insert, which answers its own 400.
 */
export async function assertDimensionKeysDeclared(ctx: ReadCtx, prices: { at: string; price: DimensionalPrice }[]): Promise<void> {
  const dimensional = prices.filter(({ price }) => price.metric_code && price.dimension_prices?.length);
  if (dimensional.length === 0) return;
  const metrics = await metricsByCodes(ctx.tx, ctx.tenantId, [...new Set(dimensional.map(({ price }) => price.metric_code!))]);
  const declared = new Map(metrics.map((m) => [m.code, m.dimensions]));
  for (const { at, price } of dimensional) {
    const dimensions = declared.get(price.metric_code!);
    if (!dimensions) continue;
    price.dimension_prices!.forEach((entry, i) => {
      const unknown = Object.keys(entry.match).find((key) => !dimensions.includes(key));
      if (unknown === undefined) return;
      const named = dimensions.length ? `its dimensions are ${dimensions.join(', ')}` : 'it declares no dimensions';
      throw errors.invalidField(`${at ? `${at}.` : ''}dimension_prices.${i}.match.${unknown}`, `is not a dimension of metric ${price.metric_code} (${named})`);
    });
  }
}
