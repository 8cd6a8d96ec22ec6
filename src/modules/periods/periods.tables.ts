import type { NullableJson, Timestamp } from '../../platform/db/schema.js';

export type PeriodStatus = 'open' | 'closed';

/** A month of an entity that was closed, reopened or filed (a month without a row is open). */
export interface EntityPeriodsTable {
  tenant_id: string;
  id: string;
  entity_id: string;
  /** `YYYY-MM`, a calendar month in the entity's time zone. */
  period: string;
  status: PeriodStatus;
  closed_at: Timestamp | null;
  closed_by: string | null;
  reopened_at: Timestamp | null;
  reopened_by: string | null;
  reopen_reason: string | null;
  gstr1_filed_at: Timestamp | null;
  gstr1_arn: string | null;
  gstr1_return: NullableJson<unknown>;
  gstr3b_filed_at: Timestamp | null;
  gstr3b_arn: string | null;
  gstr3b_return: NullableJson<unknown>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    entity_periods: EntityPeriodsTable;
  }
}
