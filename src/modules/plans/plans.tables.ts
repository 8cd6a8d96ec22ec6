import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp, TableAccess } from '../../platform/db/schema.js';
import type { DimensionPrice } from './pricing.js';

export type IntervalUnit = 'day' | 'week' | 'month' | 'year';

export interface PlansTable {
  tenant_id: string;
  id: string;
  name: string;
  code: string;
  description: string | null;
  interval_unit: IntervalUnit;
  interval_count: number;
  trial_days: number;
  active: boolean;
  hsn_code: string;
  /** The GST rate (basis points) when the HSN/SAC code alone does not decide it; null: the code's. */
  tax_rate_bp: Generated<number | null>;
  features: Json<string[]>;
  metadata: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type PriceTier = { up_to: number | null; unit_amount: number; flat_amount: number };

export interface PricesTable {
  tenant_id: string;
  id: string;
  plan_id: string;
  currency: string;
  amount: number;
  type: string;
  billing_scheme: 'per_unit' | 'tiered' | 'metered';
  /** DESIGN §13: tiers (graduated or volume) instead of one unit amount (then `amount` is 0). */
  tiers_mode: Generated<'graduated' | 'volume' | null>;
  tiers: ColumnType<PriceTier[] | null, string | null | undefined, string | null>;
  /** Units per package: the quantity is rounded up to whole packages, `amount` is one package's price. */
  package_size: Generated<number | null>;
  /** A metered price's billable metric (billed in arrears on its usage). */
  metric_code: Generated<string | null>;
  /**
   * DESIGN §24: a metered price's prices per dimension combination of its metric (decision 0480);
   * null: none. With them, `amount`/`tiers` are the default for usage no entry matches, and a
   * price with neither (amount 0) leaves that usage unpriced.
   */
  dimension_prices: ColumnType<DimensionPrice[] | null, string | null | undefined, string | null>;
  /** The HSN/SAC of this price's invoice lines; null: the plan's. */
  hsn_code: Generated<string | null>;
  /** Prices are immutable: a change is a new price, the old one archived (active false). */
  active: Generated<boolean>;
  archived_at: Generated<Timestamp | null>;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    plans: PlansTable;
    prices: PricesTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const plansTableAccess: TableAccess = {
  plans: { read: ['importer'], write: ['importer'] },
  prices: { read: ['analytics', 'importer', 'subscriptions'], write: ['importer'] },
};
