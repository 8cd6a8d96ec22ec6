import { z } from 'zod';
import { fields, inInstantRange } from '../../platform/http/envelope.js';

export const aggregation = z.enum(['count', 'sum', 'max', 'unique_count', 'latest']);

/** A dimension: the name of an event property (properties.<name>), compared by its text. */
export const dimensionName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');

export const MAX_DIMENSIONS = 5;

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
    dimensions: z
      .array(dimensionName)
      .max(MAX_DIMENSIONS)
      .default([])
      .describe(
        "event properties the usage is broken down by (e.g. model, direction): a metered price's dimension_prices match on them, and usage and invoices show one line per combination",
      ),
  })
  .superRefine((body, ctx) => {
    if (body.aggregation !== 'count' && !body.field) ctx.addIssue({ code: 'custom', path: ['field'], message: `field is required for ${body.aggregation}` });
    if (new Set(body.dimensions).size !== body.dimensions.length)
      ctx.addIssue({ code: 'custom', path: ['dimensions'], message: 'dimensions must be distinct' });
    if (body.field && body.dimensions.includes(body.field))
      ctx.addIssue({ code: 'custom', path: ['dimensions'], message: 'the aggregated field cannot also be a dimension' });
  })
  .meta({ examples: [{ code: 'llm_tokens', name: 'LLM tokens', aggregation: 'sum', field: 'tokens', dimensions: ['model', 'direction'] }] });

export type CreateBillableMetricBody = z.infer<typeof createBillableMetricBody>;

export const billableMetricSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    code: z.string(),
    name: z.string(),
    aggregation,
    field: z.string().nullable(),
    dimensions: z.array(z.string()),
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

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
const INSTANT = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
/** Whether the date part of an INSTANT-shaped text names a real day (no 30 February). */
function realDay(iso: string): boolean {
  const day = (iso.charCodeAt(8) - 48) * 10 + (iso.charCodeAt(9) - 48);
  if (day <= 28) return true;
  const month = (iso.charCodeAt(5) - 48) * 10 + (iso.charCodeAt(6) - 48);
  return day <= (month === 2 && leapYear(Number(iso.slice(0, 4))) ? 29 : DAYS_IN_MONTH[month - 1]!);
}
const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;

/** Whether every key of a parsed event is one usageEventBody knows (zod would strip the others). */
function onlyEventKeys(e: Record<string, unknown>): boolean {
  for (const key in e) {
    switch (key) {
      case 'transaction_id':
      case 'customer_id':
      case 'external_customer_id':
      case 'metric_code':
      case 'timestamp':
      case 'properties':
        continue;
      default:
        return false;
    }
  }
  return true;
}

/**
 * usageEventBody.safeParse for a batch's hot path: the common, plainly valid event is checked by
 * hand (a zod parse costs ~20 µs an event, the ingestion's largest cost); anything else goes
 * through zod, which decides and words the error. Never accepts what zod would refuse.
 */
export function parseUsageEvent(item: unknown): ReturnType<typeof usageEventBody.safeParse> {
  if (typeof item === 'object' && item !== null && !Array.isArray(item) && isPlainEvent(item as Record<string, unknown>)) {
    const e = item as Record<string, unknown>;
    // An event with no other keys is already what zod would return: taken as it is, not copied.
    if (onlyEventKeys(e)) return { success: true, data: e as UsageEventBody } as ReturnType<typeof usageEventBody.safeParse>;
    const data: UsageEventBody = { transaction_id: e.transaction_id as string, metric_code: e.metric_code as string };
    if (e.customer_id !== undefined) data.customer_id = e.customer_id as string;
    if (e.external_customer_id !== undefined) data.external_customer_id = e.external_customer_id as string;
    if (e.timestamp !== undefined) data.timestamp = e.timestamp as string;
    if (e.properties !== undefined) data.properties = e.properties as Record<string, unknown>;
    return { success: true, data } as ReturnType<typeof usageEventBody.safeParse>;
  }
  return usageEventBody.safeParse(item);
}

/** Whether an event's known fields are plainly what usageEventBody accepts (the hand check). */
function isPlainEvent(e: Record<string, unknown>): boolean {
  const properties = e.properties;
  return (
    text(e.transaction_id, 200) &&
    text(e.metric_code, 100) &&
    (e.customer_id === undefined ? text(e.external_customer_id, 200) : typeof e.customer_id === 'string' && UUID.test(e.customer_id)) &&
    (e.external_customer_id === undefined || text(e.external_customer_id, 200)) &&
    (e.timestamp === undefined || (typeof e.timestamp === 'string' && INSTANT.test(e.timestamp) && realDay(e.timestamp) && inInstantRange(e.timestamp))) &&
    (properties === undefined ||
      (typeof properties === 'object' && properties !== null && !Array.isArray(properties) && Object.keys(properties).every((k) => k.length <= 100)))
  );
}

export const MAX_BATCH_EVENTS = 1000;

export const usageEventBatchBody = z.object({
  events: z
    .array(z.record(z.string(), z.unknown()).describe('a usage event as POST /v1/usage/events takes it; an invalid one is rejected by its index'))
    .min(1)
    .max(MAX_BATCH_EVENTS),
});

/**
 * Whether a batch body is plainly what usageEventBatchBody accepts and returns unchanged — an
 * object whose only key is `events`, a list of 1 to MAX_BATCH_EVENTS objects — checked in one loop
 * (the zod parse copies every event, ~1 µs each). Anything else goes through zod, which decides
 * and words the error.
 */
export function isPlainBatchBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const events = (body as { events?: unknown }).events;
  if (!Array.isArray(events) || events.length < 1 || events.length > MAX_BATCH_EVENTS) return false;
  let keys = 0;
  for (const key in body) if (Object.hasOwn(body, key)) keys += 1;
  if (keys !== 1) return false;
  for (let i = 0; i < events.length; i += 1) {
    const e: unknown = events[i];
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  }
  return true;
}

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
