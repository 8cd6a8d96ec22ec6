import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const aggregation = z.enum(['count', 'sum', 'max', 'unique_count', 'latest']);

const code = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');

export const createBillableMetricBody = z
  .object({
    code,
    name: fields.requiredText(200),
    aggregation,
    field: z.string().trim().min(1).max(100).optional().describe('the event property aggregated; required for sum, max, unique_count and latest'),
  })
  .superRefine((body, ctx) => {
    if (body.aggregation !== 'count' && !body.field) ctx.addIssue({ code: 'custom', path: ['field'], message: `field is required for ${body.aggregation}` });
  })
  .meta({ examples: [{ code: 'api_calls', name: 'API calls', aggregation: 'count' }] });

export type CreateBillableMetricBody = z.infer<typeof createBillableMetricBody>;

export const billableMetricSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    code: z.string(),
    name: z.string(),
    aggregation,
    field: z.string().nullable(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'BillableMetric' });

export type BillableMetric = z.infer<typeof billableMetricSchema>;

export const usageEventBody = z
  .object({
    transaction_id: z.string().min(1).max(200).describe('unique per tenant: a repeat is counted as a duplicate and ignored'),
    customer_id: z.uuid().optional(),
    external_customer_id: z.string().min(1).max(200).optional(),
    metric_code: z.string().min(1).max(100),
    timestamp: fields.instant().optional().describe('when the usage happened; now when absent'),
    properties: z.record(z.string().max(100), z.unknown()).optional(),
  })
  .superRefine((event, ctx) => {
    if (!event.customer_id && !event.external_customer_id) {
      ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'customer_id or external_customer_id is required' });
    }
  })
  .meta({ examples: [{ transaction_id: 'tx_0001', external_customer_id: 'acme', metric_code: 'api_calls', properties: { region: 'in' } }] });

export type UsageEventBody = z.infer<typeof usageEventBody>;

export const MAX_BATCH_EVENTS = 1000;

export const usageEventBatchBody = z.object({
  events: z
    .array(z.record(z.string(), z.unknown()).describe('a usage event as POST /v1/usage/events takes it; an invalid one is rejected by its index'))
    .min(1)
    .max(MAX_BATCH_EVENTS),
});

export const usageIngestResultSchema = z
  .object({
    accepted: z.int(),
    duplicates: z.int(),
    rejected: z.array(z.object({ index: z.int(), error: z.string() })),
  })
  .meta({ id: 'UsageIngestResult' });

export type UsageIngestResult = z.infer<typeof usageIngestResultSchema>;

export const usageEventAcceptedSchema = z
  .object({
    transaction_id: z.string(),
    duplicate: z.boolean().describe('true when this transaction_id was already recorded (nothing changed)'),
  })
  .meta({ id: 'UsageEventAccepted' });
