import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { creditNoteSchema } from '../credit-notes/index.js';
import { invoiceSchema } from '../invoices/index.js';
import { CANCELLATION_REASONS } from './subscriptions.tables.js';

export const subscriptionStatus = z.enum(['active', 'trialing', 'paused', 'canceled', 'past_due', 'unpaid']);

/** A timestamp in the request: RFC 3339 with an offset (normalized to UTC). */
const instant = () => fields.instant();

/**
 * A minimum commitment per period (DESIGN §24, decision 0540): `amount` in the subscription's
 * currency, over the whole subscription or one of its prices (`price_id`).
 */
export const minimumCommitmentBody = z.object({
  amount: fields.positiveMinorUnits().describe("the minimum per billing period in the subscription's currency, minor units, before GST"),
  currency: fields.currency().optional().describe("must be the subscription's currency (the default)"),
  price_id: z
    .uuid()
    .nullable()
    .default(null)
    .describe(
      "null (the default): everything the subscription bills for the period counts; a price of the subscription (its plan's fixed or metered price, or an item's): only that price's lines count",
    ),
});
export type MinimumCommitmentBody = z.infer<typeof minimumCommitmentBody>;

export const minimumCommitmentSchema = z
  .object({
    amount: z.int().describe('per billing period, minor units, before GST'),
    price_id: z.uuid().nullable().describe('null: the whole subscription'),
    since: fields.timestamp().describe('when it took effect; a period it starts inside is prorated by days'),
  })
  .meta({ id: 'MinimumCommitment' });
export type MinimumCommitment = z.infer<typeof minimumCommitmentSchema>;

/** DESIGN §10: `{ customer_id, plan_id, currency?, quantity?=1, trial_days?, start_at? }`. */
export const createSubscriptionBody = z.object({
  customer_id: z.uuid(),
  plan_id: z.uuid(),
  currency: fields.currency().optional(),
  quantity: z.int().min(1).max(1_000_000).default(1),
  trial_days: z.int().min(0).max(730).optional().describe("overrides the plan's trial_days; 0 starts billing at once"),
  start_at: instant().optional().describe('defaults to now; may be backdated up to 366 days, never in the future (use trial_days)'),
  external_id: fields.text(200).optional(),
  metadata: fields.metadata().default({}),
  collection_method: z.enum(['send_invoice', 'charge_automatically']).default('send_invoice'),
  coupon: z.string().trim().min(1).max(100).optional().describe("a coupon's id or code, applied to the subscription's invoices for the coupon's duration"),
  minimum_commitment: minimumCommitmentBody
    .optional()
    .describe("a minimum per period (decision 0540): the invoice that bills a period's usage adds a true-up line for any shortfall"),
});
export type CreateSubscriptionBody = z.infer<typeof createSubscriptionBody>;

export const listSubscriptionsQuery = z.object({
  status: subscriptionStatus.optional(),
  customer_id: z.uuid().optional(),
  plan_id: z.uuid().optional(),
});
export type ListSubscriptionsQuery = z.infer<typeof listSubscriptionsQuery>;

export const cancelSubscriptionBody = z
  .object({
    at_period_end: z.boolean().default(true),
    prorate: z.boolean().default(false).describe('with at_period_end false: credit the unused part of the paid current period'),
    reason: z.enum(CANCELLATION_REASONS).optional().describe('why the customer leaves; reported by GET /v1/analytics/churn-reasons'),
    feedback: fields.text(2000).optional().describe("the customer's own words"),
    preview: z
      .boolean()
      .default(false)
      .describe('answer with what the cancellation would do (credit note, final usage invoice, refundable credit) and write nothing'),
  })
  .superRefine((body, ctx) => {
    if (body.prorate && body.at_period_end) {
      ctx.addIssue({ code: 'custom', path: ['prorate'], message: 'prorate applies to an immediate cancellation (at_period_end: false)' });
    }
  });
export type CancelSubscriptionBody = z.infer<typeof cancelSubscriptionBody>;

export const changePlanBody = z.object({
  plan_id: z.uuid(),
  prorate: z.boolean().default(true),
  preview: z.boolean().default(false),
});
export type ChangePlanBody = z.infer<typeof changePlanBody>;

/** PATCH /v1/subscriptions/{id}: seats (DESIGN §13), prorated like a plan change. */
export const updateSubscriptionBody = z.object({
  quantity: z.int().min(1).max(1_000_000),
  proration_behavior: z
    .enum(['create_prorations', 'none'])
    .default('create_prorations')
    .describe(
      'create_prorations: credit the unused time and charge the new quantity for the rest of the period now; none: the new quantity is billed from the next renewal',
    ),
  preview: z.boolean().default(false).describe('answer with what the change would do (invoice, credit note, proration) and write nothing'),
});
export type UpdateSubscriptionBody = z.infer<typeof updateSubscriptionBody>;

export const subscriptionSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    customer_id: z.uuid(),
    plan_id: z.uuid(),
    price_id: z.uuid().nullable().describe('the price it bills (kept when the plan gains a new price)'),
    status: subscriptionStatus,
    currency: z.string(),
    quantity: z.int(),
    gift_code: z.string().nullable(),
    gifted_by: z.uuid().nullable(),
    current_period_start: fields.timestamp(),
    current_period_end: fields.timestamp(),
    cancel_at_period_end: z.boolean(),
    trial_start: fields.timestamp().nullable(),
    trial_end: fields.timestamp().nullable(),
    canceled_at: fields.timestamp().nullable(),
    paused_at: fields.timestamp().nullable(),
    ended_at: fields.timestamp().nullable(),
    external_id: z.string().nullable(),
    latest_invoice_id: z.uuid().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    collection_method: z.enum(['send_invoice', 'charge_automatically']),
    cancellation_reason: z.enum(CANCELLATION_REASONS).nullable().describe('why it was canceled, as the cancel request said (null: not given, or not canceled)'),
    cancellation_feedback: z.string().nullable().describe("the customer's own words, as the cancel request gave them"),
    minimum_commitment: minimumCommitmentSchema.nullable().describe('the minimum per period (decision 0540); null: none'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Subscription' });

export type Subscription = z.infer<typeof subscriptionSchema>;

/** The credit of an immediate cancellation with `prorate` (present only then). */
export const cancelProrationSchema = z.object({
  remaining_days: z.int(),
  period_days: z.int(),
  unused_value: z.int().describe('what the unused time was worth, gross, minor units'),
  unused_credit: z.int().describe('what was credited: the unused value, or what remained creditable on its invoice if less'),
  credit_capped: z.boolean().describe('true when earlier credit notes on the invoice left less to credit than the unused value'),
  credit_note_id: z.uuid().nullable(),
});
export type CancelProration = z.infer<typeof cancelProrationSchema>;

/** What POST /v1/subscriptions/{id}/cancel answers: the subscription, plus the proration credit when asked for. */
export const canceledSubscriptionSchema = subscriptionSchema
  .extend({
    proration: cancelProrationSchema.optional(),
    preview: z
      .object({
        credit_note: creditNoteSchema
          .nullable()
          .describe('the credit note for the unused time (prorate), as issued — after the final invoice spent what it could'),
        final_invoice: invoiceSchema.nullable().describe("the invoice for the current period's usage so far (immediate cancel; null when nothing is due)"),
        refundable_amount: z
          .int()
          .describe(
            "what would stay on the credit note after the final invoice: the customer's credit, refundable in cash through POST /v1/credit-notes/{id}/refunds",
          ),
      })
      .optional()
      .describe('with preview: true only — what the cancellation would produce; nothing was written (the subscription fields show it as it would be)'),
  })
  .meta({ id: 'CanceledSubscription' });

/** What POST /v1/subscriptions/{id}/change-plan answers (also for a preview, which writes nothing). */
export const planChangeSchema = z
  .object({
    preview: z.boolean(),
    subscription: subscriptionSchema,
    /** The invoice for the rest of the period on the new plan (null when nothing is charged). */
    invoice: invoiceSchema.nullable(),
    /** The credit for the unused part of the old plan, tied to the invoice that paid for it. */
    credit_note: creditNoteSchema.nullable(),
    proration: z.object({
      prorated: z.boolean(),
      changed_at: fields.timestamp(),
      period_start: fields.timestamp(),
      period_end: fields.timestamp(),
      remaining_days: z.int(),
      period_days: z.int(),
      unused_value: z.int().describe('what the unused time of the old plan was worth, gross, minor units'),
      unused_credit: z.int().describe('gross, minor units: the unused value, or what remained creditable on its invoice if less'),
      credit_capped: z.boolean().describe('true when earlier credit notes on the invoice left less to credit than the unused value'),
      new_charge: z.int().describe('net of tax, minor units (the invoice adds GST)'),
    }),
  })
  .meta({ id: 'SubscriptionPlanChange' });
export type PlanChange = z.infer<typeof planChangeSchema>;

/** DESIGN §13: GET /v1/subscriptions/{id}/usage. */
export const subscriptionUsageSchema = z
  .object({
    period_start: fields.timestamp(),
    period_end: fields.timestamp(),
    metrics: z.array(
      z.object({
        metric_code: z.string(),
        quantity: z.int().describe('the billable quantity so far (the aggregate, rounded up to whole units)'),
        amount: z.int().describe('what the metered price makes of it, in minor units, before GST'),
        unpriced_quantity: z
          .int()
          .describe('DESIGN §24: the part of quantity whose dimensions match no dimension price of a price without a default: counted, not billed'),
        dimensions: z
          .array(
            z.object({
              dimensions: z.record(z.string(), z.string().nullable()).describe("the combination: each dimension's value (null: the events lack it)"),
              quantity: z.int(),
              amount: z.int().describe('in minor units, before GST; 0 when unpriced'),
              priced: z.boolean().describe('false: no dimension price matched and the price has no default'),
            }),
          )
          .describe('one entry per dimension combination used, for a price with dimension_prices; empty otherwise'),
      }),
    ),
  })
  .meta({ id: 'SubscriptionUsage' });
/** A seat change: the subscription as changed, with what it invoiced and credited (as a plan change reports it). */
export const subscriptionUpdateSchema = subscriptionSchema
  .extend({
    preview: z.boolean(),
    invoice: invoiceSchema.nullable(),
    credit_note: creditNoteSchema.nullable(),
    proration: planChangeSchema.shape.proration.extend({ previous_quantity: z.int(), quantity: z.int() }),
  })
  .meta({ id: 'SubscriptionUpdate' });
export type SubscriptionUpdate = z.infer<typeof subscriptionUpdateSchema>;

// ── items (add-ons, DESIGN §24, decision 0470) ──────────────────────────────────────────────────

const prorationBehavior = z
  .enum(['create_prorations', 'none'])
  .default('create_prorations')
  .describe(
    'create_prorations: credit the unused time of the current period and charge the rest of it with the items as changed, now; none: the change is billed from the next renewal',
  );
const previewFlag = z.boolean().default(false).describe('answer with what the change would do (invoice, credit note, proration) and write nothing');

export const addSubscriptionItemBody = z.object({
  price_id: z.uuid().describe("a fixed (per-unit, package or tiered) price in the subscription's currency, of a plan on the subscription's interval"),
  quantity: z.int().min(1).max(1_000_000).default(1),
  proration_behavior: prorationBehavior,
  preview: previewFlag,
});
export type AddSubscriptionItemBody = z.infer<typeof addSubscriptionItemBody>;

export const updateSubscriptionItemBody = z.object({
  quantity: z.int().min(1).max(1_000_000),
  proration_behavior: prorationBehavior,
  preview: previewFlag,
});
export type UpdateSubscriptionItemBody = z.infer<typeof updateSubscriptionItemBody>;

export const removeSubscriptionItemQuery = z.object({
  proration_behavior: prorationBehavior,
  preview: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('true: answer with what the removal would do and write nothing'),
});
export type RemoveSubscriptionItemQuery = z.infer<typeof removeSubscriptionItemQuery>;

export const subscriptionItemSchema = z
  .object({
    id: z.uuid().nullable().describe("null for the plan's own price (changed through PATCH /v1/subscriptions/{id} and change-plan)"),
    object: z.literal('subscription_item'),
    kind: z.enum(['plan', 'add_on']).describe("plan: the subscription's plan price, always first; add_on: an item beside it"),
    subscription_id: z.uuid(),
    plan_id: z.uuid(),
    price_id: z.uuid().nullable().describe('null only for the plan entry of a pure usage plan'),
    quantity: z.int(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'SubscriptionItem' });
export type SubscriptionItem = z.infer<typeof subscriptionItemSchema>;

/** What adding, changing or removing an item answers: the item, the subscription, and what was invoiced and credited. */
export const subscriptionItemChangeSchema = z
  .object({
    preview: z.boolean(),
    item: subscriptionItemSchema.describe('the item as it now is (as it was, when removed)'),
    subscription: subscriptionSchema,
    invoice: invoiceSchema.nullable().describe('the rest of the period with every item as changed (null when nothing is charged now)'),
    credit_note: creditNoteSchema.nullable().describe('the credit for the unused time of the invoice that paid for the current period'),
    proration: planChangeSchema.shape.proration,
  })
  .meta({ id: 'SubscriptionItemChange' });
export type SubscriptionItemChange = z.infer<typeof subscriptionItemChangeSchema>;
