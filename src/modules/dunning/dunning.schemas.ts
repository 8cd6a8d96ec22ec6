import { z } from 'zod';

const channel = z.enum(['email', 'sms', 'in_app', 'retry_payment']);
const trigger = z.enum(['payment_failed', 'invoice_overdue']);
const exhaustedAction = z.enum(['cancel', 'mark_unpaid', 'nothing']);
/** At most 90 days after the execution starts. */
const delayHours = z.int().min(0, 'must not be negative').max(2160, 'must be at most 2160 (90 days)');

export const createCampaignBody = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).default(''),
  is_active: z.boolean().default(true),
  trigger_event: trigger.default('payment_failed'),
  is_default: z.boolean().default(false),
  payment_wall_enabled: z.boolean().default(false),
  payment_wall_grace_days: z.int().min(0).max(365).default(3),
  exhausted_action: exhaustedAction.default('mark_unpaid').describe('what happens to the subscription when the last step ran unpaid'),
});
export type CreateCampaignBody = z.infer<typeof createCampaignBody>;

export const updateCampaignBody = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(2000).optional(),
  is_active: z.boolean().optional(),
  trigger_event: trigger.optional(),
  is_default: z.boolean().optional(),
  payment_wall_enabled: z.boolean().optional(),
  payment_wall_grace_days: z.int().min(0).max(365).optional(),
  exhausted_action: exhaustedAction.optional(),
});
export type UpdateCampaignBody = z.infer<typeof updateCampaignBody>;

export const createStepBody = z.object({
  delay_hours: delayHours,
  channel,
  template_name: z.string().max(100).default(''),
  subject: z.string().max(500).default(''),
  body: z.string().max(20_000).default(''),
  is_payment_wall: z.boolean().default(false),
});
export type CreateStepBody = z.infer<typeof createStepBody>;

export const updateStepBody = z.object({
  delay_hours: delayHours.optional(),
  channel: channel.optional(),
  template_name: z.string().max(100).optional(),
  subject: z.string().max(500).optional(),
  body: z.string().max(20_000).optional(),
  is_payment_wall: z.boolean().optional(),
});
export type UpdateStepBody = z.infer<typeof updateStepBody>;

export const stepParams = z.object({ id: z.uuid({ message: 'must be a UUID' }), step_id: z.uuid({ message: 'must be a UUID' }) });
export const deleteCampaignQuery = z.object({ cancel_executions: z.enum(['true', 'false']).optional() });
export const listExecutionsQuery = z.object({ invoice_id: z.uuid().optional(), status: z.enum(['active', 'recovered', 'exhausted', 'canceled']).optional() });
export const overviewQuery = z.object({
  start_date: z
    .string()
    .max(30)
    .regex(/^\d{4}-\d{2}-\d{2}/, 'must be a date YYYY-MM-DD')
    .optional()
    .describe('ISO 8601 date; default 30 days ago'),
  end_date: z
    .string()
    .max(30)
    .regex(/^\d{4}-\d{2}-\d{2}/, 'must be a date YYYY-MM-DD')
    .optional()
    .describe('ISO 8601 date; default today'),
});

export const stepSchema = z
  .object({
    id: z.uuid(),
    campaign_id: z.uuid(),
    step_order: z.int(),
    delay_hours: z.int(),
    channel,
    template_name: z.string(),
    subject: z.string(),
    body: z.string(),
    is_payment_wall: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DunningStep' });

export const campaignSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    name: z.string(),
    description: z.string(),
    is_active: z.boolean(),
    trigger_event: trigger,
    is_default: z.boolean(),
    payment_wall_enabled: z.boolean(),
    payment_wall_grace_days: z.int(),
    exhausted_action: exhaustedAction,
    active_subscriptions: z.int().describe('subscriptions whose invoices this campaign is dunning now'),
    active_executions: z.int(),
    steps: z.array(stepSchema),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DunningCampaign' });

export const actionSchema = z.object({
  step_id: z.uuid().nullable(),
  channel: z.string(),
  executed_at: z.string(),
  outcome: z.enum(['succeeded', 'failed', 'skipped']),
  detail: z.string(),
});

export const executionSchema = z
  .object({
    id: z.uuid(),
    campaign_id: z.uuid(),
    invoice_id: z.uuid(),
    customer_id: z.uuid(),
    trigger_event: trigger,
    status: z.enum(['active', 'recovered', 'exhausted', 'canceled']),
    steps_done: z.int(),
    next_step_at: z.string().nullable(),
    next_step_reason: z.string().describe("why the next step runs at next_step_at (smart retry timing); empty: the step's delay"),
    payment_wall_active: z.boolean(),
    started_at: z.string(),
    ended_at: z.string().nullable(),
    actions: z.array(actionSchema),
  })
  .meta({ id: 'DunningExecution' });

export const accessSchema = z
  .object({ blocked: z.boolean(), reason: z.string().nullable(), invoice_ids: z.array(z.uuid()), blocked_since: z.string().nullable() })
  .meta({ id: 'CustomerAccess' });

export const overviewSchema = z
  .object({
    total_retries: z.int(),
    total_successes: z.int(),
    success_rate: z.number(),
    successful_retries: z.int(),
    recovery_rate: z.number(),
    period: z.object({ start: z.string(), end: z.string() }),
    by_action: z.array(z.object({ action_id: z.string(), attempts: z.int(), successes: z.int(), success_rate: z.number() })),
  })
  .meta({ id: 'DunningOverview' });

const retryAction = z.enum(['as_scheduled', 'learned_hour', 'morning', 'evening']);

export const weightsSchema = z
  .object({
    algorithm: z.literal('thompson_sampling'),
    actions: z
      .array(retryAction)
      .describe("the retry actions: the step's own time, the hour history chose (decision 0131), 09:00 or 19:00 on the entity's clock"),
    contexts: z.array(
      z.object({
        key: z.string().describe('failure code | amount band | payment method type'),
        context: z.object({ failure_code: z.string(), amount_band: z.string(), method_type: z.string() }),
        best_action: retryAction,
        updated_at: z.string(),
        weights: z.array(
          z.object({
            action: retryAction,
            attempts: z.int(),
            successes: z.int(),
            failures: z.int(),
            expected_reward: z.number().describe('the posterior mean chance that a retry of this action recovers the invoice'),
            alpha: z.number(),
            beta: z.number(),
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'DunningWeights' });

export const collectionItemSchema = z
  .object({
    invoice_id: z.uuid().describe('The invoice (the cursor for starting_after / ending_before)'),
    number: z.string().nullable(),
    customer_id: z.uuid(),
    currency: z.string(),
    amount_due: z.int(),
    due_date: z.string().nullable(),
    days_overdue: z.int(),
    dunning: z
      .object({ execution_id: z.uuid(), status: z.string(), steps_done: z.int(), next_step_at: z.string().nullable(), payment_wall_active: z.boolean() })
      .nullable(),
  })
  .meta({ id: 'CollectionItem' });
