import type { Generated } from 'kysely';
import type { Timestamp } from '../../platform/db/schema.js';

export type DunningTrigger = 'payment_failed' | 'invoice_overdue';
export type DunningChannel = 'email' | 'sms' | 'in_app' | 'retry_payment';
export type ExecutionStatus = 'active' | 'recovered' | 'exhausted' | 'canceled';
export type ActionOutcome = 'succeeded' | 'failed' | 'skipped';
export type ExhaustedAction = 'cancel' | 'mark_unpaid' | 'nothing';

export interface DunningCampaignsTable {
  tenant_id: string;
  id: string;
  name: string;
  description: string;
  is_active: boolean;
  trigger_event: DunningTrigger;
  is_default: boolean;
  payment_wall_enabled: boolean;
  payment_wall_grace_days: number;
  exhausted_action: ExhaustedAction;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DunningStepsTable {
  tenant_id: string;
  id: string;
  campaign_id: string;
  step_order: number;
  delay_hours: number;
  channel: DunningChannel;
  template_name: string;
  subject: string;
  body: string;
  is_payment_wall: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DunningExecutionsTable {
  tenant_id: string;
  id: string;
  campaign_id: string;
  invoice_id: string;
  customer_id: string;
  trigger_event: DunningTrigger;
  status: ExecutionStatus;
  steps_done: number;
  next_step_at: Timestamp | null;
  /** Why the next step runs at next_step_at (smart retry timing), '' when it is the step's delay. */
  next_step_reason: Generated<string>;
  /** The arm and context Thompson sampling chose for the next retry (docs/decisions/0310); null when none. */
  next_retry_arm: Generated<string | null>;
  next_retry_context: Generated<string | null>;
  wall_at: Timestamp | null;
  payment_wall_active: boolean;
  payment_wall_since: Timestamp | null;
  started_at: Timestamp;
  ended_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DunningActionsTable {
  tenant_id: string;
  id: string;
  execution_id: string;
  step_id: string | null;
  channel: string;
  executed_at: Timestamp;
  outcome: ActionOutcome;
  detail: string;
  led_to_recovery: boolean;
  /** A retry chosen by the bandit: its arm and context, and whether its outcome was learned. */
  retry_arm: Generated<string | null>;
  retry_context: Generated<string | null>;
  retry_learned: Generated<boolean>;
}

export interface DunningRetryArmsTable {
  tenant_id: string;
  context: string;
  arm: string;
  successes: number;
  failures: number;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    dunning_campaigns: DunningCampaignsTable;
    dunning_steps: DunningStepsTable;
    dunning_executions: DunningExecutionsTable;
    dunning_actions: DunningActionsTable;
    dunning_retry_arms: DunningRetryArmsTable;
  }
}
