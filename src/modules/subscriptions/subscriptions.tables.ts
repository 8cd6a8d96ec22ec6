import type { Generated } from 'kysely';
import type { Json, Timestamp, TableAccess } from '../../platform/db/schema.js';
import type { IntervalUnit } from '../plans/index.js';

export type SubscriptionStatus = 'active' | 'trialing' | 'paused' | 'canceled' | 'past_due' | 'unpaid';

/** Why a customer left (decision 0381): the same list as Stripe's cancellation feedback, so exports line up. */
export const CANCELLATION_REASONS = [
  'too_expensive',
  'missing_features',
  'switched_service',
  'unused',
  'customer_service',
  'too_complex',
  'low_quality',
  'other',
] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

export interface SubscriptionsTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  plan_id: string;
  /** The price it bills: the one it was created (or last changed) with, archived or not. */
  price_id: string | null;
  currency: string;
  quantity: number;
  status: SubscriptionStatus;
  interval_unit: IntervalUnit;
  interval_count: number;
  /** Period n starts at billing_anchor + n × interval (periods.ts); -1 is a stored period ending at the anchor. */
  billing_anchor: Timestamp;
  period_index: number;
  current_period_start: Timestamp;
  current_period_end: Timestamp;
  cancel_at_period_end: boolean;
  trial_start: Timestamp | null;
  trial_end: Timestamp | null;
  canceled_at: Timestamp | null;
  paused_at: Timestamp | null;
  ended_at: Timestamp | null;
  gift_code: string | null;
  gifted_by: string | null;
  external_id: string | null;
  latest_invoice_id: string | null;
  metadata: Json<Record<string, unknown>>;
  /** DESIGN §11: how its invoices are collected; renewal invoices inherit it. */
  collection_method: 'send_invoice' | 'charge_automatically';
  /** Recorded with the cancellation (scheduled or immediate); cleared by a reactivation. */
  cancellation_reason: Generated<CancellationReason | null>;
  cancellation_feedback: Generated<string | null>;
  /** A minimum per period in minor units (DESIGN §24, decision 0540); null: no commitment. */
  minimum_amount: Generated<number | null>;
  /** The price the minimum is on; null: the whole subscription. */
  minimum_price_id: Generated<string | null>;
  /** When the commitment took effect: a period it starts inside is prorated by days. */
  minimum_since: Generated<Timestamp | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An add-on beside the plan (DESIGN §24, decision 0470): another fixed price, with its own quantity. */
export interface SubscriptionItemsTable {
  tenant_id: string;
  id: string;
  subscription_id: string;
  /** The plan the price belongs to: its name, HSN/SAC and GST rate go on the item's invoice lines. */
  plan_id: string;
  price_id: string;
  quantity: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    subscriptions: SubscriptionsTable;
    subscription_items: SubscriptionItemsTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const subscriptionsTableAccess: TableAccess = {
  // Usage alerts find the period a watched customer's subscription is in (decision 0690).
  // A test clock's advance asks whether the billing run's delinquency pass would move one (decision 0810).
  subscriptions: { read: ['alerts', 'analytics', 'importer', 'invoices'], write: ['importer'] },
  // MRR counts the add-ons' recurring amounts (decision 0560).
  subscription_items: { read: ['analytics'] },
};
