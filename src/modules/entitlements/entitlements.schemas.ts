import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const featureType = z.enum(['boolean', 'quantity', 'enum']);

export const createFeatureBody = z
  .object({
    key: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'must be 1–64 lower-case letters, digits, _ . or -, starting with a letter or digit'),
    name: fields.singleLineName(120),
    type: featureType,
    values: z.array(z.string().min(1).max(64)).min(1).max(50).optional().describe('an enum feature: its allowed values'),
  })
  .strict()
  .meta({ examples: [{ key: 'support_tier', name: 'Support tier', type: 'enum', values: ['standard', 'priority'] }] });
export type CreateFeatureBody = z.infer<typeof createFeatureBody>;

export const featureValue = z.union([z.boolean(), z.int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().max(64), z.null()]);

export const putEntitlementsBody = z
  .array(
    z
      .object({
        feature_key: z.string().max(64),
        value: featureValue.describe('boolean; quantity: a whole number ≥ 0 or null (unlimited); enum: one of its values'),
      })
      .strict(),
  )
  .max(200);
export type PutEntitlementsBody = z.infer<typeof putEntitlementsBody>;

export const featureSchema = z
  .object({
    id: z.uuid(),
    key: z.string(),
    name: z.string(),
    type: featureType,
    values: z.array(z.string()).nullable(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'Feature' });

export const entitlementListSchema = z.object({ data: z.array(z.object({ feature_key: z.string(), value: featureValue })) });

export const customerEntitlementsSchema = z
  .object({
    customer_id: z.uuid(),
    features: z.record(z.string(), featureValue),
    blocked: z.boolean().describe('true behind the payment wall (dunning) or a blocking alert'),
    blocked_reason: z.enum(['payment_wall', 'alert']).nullable(),
    blocked_by: z.uuid().nullable().describe('the blocking alert, when an alert blocks'),
    as_of: fields.timestamp(),
  })
  .meta({ id: 'CustomerEntitlements' });
export type CustomerEntitlements = z.infer<typeof customerEntitlementsSchema>;
