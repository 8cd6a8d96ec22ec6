import type { Generated } from 'kysely';
import type { Timestamp } from '../../platform/db/schema.js';

export type MrrMovementKind = 'new' | 'expansion' | 'contraction' | 'churned' | 'reactivated';

export interface MrrCurrentTable {
  tenant_id: string;
  subscription_id: string;
  customer_id: string;
  currency: string;
  mrr: number;
  ever_positive: boolean;
  as_of: string;
  prior_mrr: number;
  prior_ever_positive: boolean;
}

export interface MrrMovementsTable {
  tenant_id: string;
  id: Generated<string>;
  subscription_id: string;
  customer_id: string;
  currency: string;
  effective_date: string;
  kind: MrrMovementKind;
  previous_mrr: number;
  mrr: number;
  created_at: Timestamp;
}

export interface MrrDailyTable {
  tenant_id: string;
  snapshot_date: string;
  currency: string;
  mrr: number;
  subscriptions: number;
  customers: number;
  taken_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    mrr_current: MrrCurrentTable;
    mrr_movements: MrrMovementsTable;
    mrr_daily: MrrDailyTable;
  }
}
