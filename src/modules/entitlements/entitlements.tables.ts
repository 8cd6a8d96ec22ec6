import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from '../../platform/db/schema.js';

export type FeatureType = 'boolean' | 'quantity' | 'enum';
/** A feature's value: true/false, a whole number (null: unlimited), or one of the enum's values. */
export type FeatureValue = boolean | number | string | null;

type Json<T> = ColumnType<T, string, string>;

export interface FeaturesTable {
  tenant_id: string;
  id: string;
  key: string;
  name: string;
  type: FeatureType;
  values: ColumnType<string[] | null, string | null, string | null>;
  created_at: Timestamp;
}

export interface PlanEntitlementsTable {
  tenant_id: string;
  plan_id: string;
  feature_id: string;
  value: Json<FeatureValue>;
}

export interface SubscriptionEntitlementsTable {
  tenant_id: string;
  subscription_id: string;
  feature_id: string;
  value: Json<FeatureValue>;
}

export interface EntitlementChangesTable {
  tenant_id: string;
  id: Generated<number>;
  changed_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    features: FeaturesTable;
    plan_entitlements: PlanEntitlementsTable;
    subscription_entitlements: SubscriptionEntitlementsTable;
    entitlement_changes: EntitlementChangesTable;
  }
}
