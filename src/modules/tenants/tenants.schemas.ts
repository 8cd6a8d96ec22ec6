import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { gstinField, sacCodeField, stateCodeField } from '../tax/index.js';
import { countryCode } from '../entities/index.js';
import { PORTAL_CANCELLATION } from './tenants.tables.js';

export const registerBody = z.object({
  name: fields.singleLineName(200),
  email: z.email().max(254),
  base_currency: fields.currency().default('INR'),
  data_region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z0-9]+)?$/, 'must be a region such as "in"')
    .default('in'),
  country_code: countryCode.default('IN'),
  state_code: stateCodeField().optional(),
  gstin: gstinField().optional(),
  sac_code: sacCodeField().optional(),
  invoice_prefix: z
    .string()
    .regex(/^[A-Z0-9/-]{1,9}$/, 'must be 1 to 9 uppercase letters, digits, "/" or "-"')
    .default('INV-'),
});
export type RegisterBody = z.infer<typeof registerBody>;

export const tenantSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    email: z.string(),
    data_region: z.string(),
    base_currency: z.string(),
    country_code: z.string(),
    organization_id: z.uuid().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Tenant' });
export type Tenant = z.infer<typeof tenantSchema>;

export const keyMode = z.enum(['test', 'live']);
export const keyRole = z.enum(['owner', 'admin', 'finance', 'support', 'viewer']);

export const apiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    mode: keyMode,
    role: keyRole.describe('what the key may do: the same role table as operators (decision 0220)'),
    prefix: z.string(),
    created_at: fields.timestamp(),
    last_used_at: fields.timestamp().nullable(),
    revoked_at: fields.timestamp().nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKey = z.infer<typeof apiKeySchema>;

/** The only shape that ever carries the secret: the answer to its creation. */
export const newApiKeySchema = apiKeySchema.extend({ key: z.string() }).meta({ id: 'NewApiKey' });
export type NewApiKey = z.infer<typeof newApiKeySchema>;

export const registerResponse = z.object({ data: z.object({ tenant: tenantSchema, api_key: newApiKeySchema }) });

export const createKeyBody = z.object({
  name: fields.text(100).optional(),
  mode: keyMode.optional().describe("the tenant's mode (the default); the other mode is refused with 400"),
  role: keyRole.optional().describe('admin by default; at most the role of whoever creates the key (403 role_forbidden above it)'),
});

export const settingsSchema = z
  .object({
    tenant_id: z.uuid(),
    tenant_name: z.string().describe("the tenant's name (the business), as registered"),
    sac_code: z.string().nullable(),
    state_code: z.string().nullable(),
    gstin: z.string().nullable(),
    credit_note_approval_required: z.boolean(),
    referral_window_days: z.int(),
    referral_reward_amount: z.int(),
    invoice_due_days: z.int(),
    portal_cancellation: z
      .enum(PORTAL_CANCELLATION)
      .describe('customers may cancel in the portal: disabled, at_period_end (default) or immediately (unused time credited)'),
    portal_plan_change: z.boolean().describe('customers may change plan in the portal (prorated as the API); default false'),
    portal_quantity_change: z.boolean().describe('customers may change seats in the portal (prorated as the API); default false'),
    portal_billing_details: z.boolean().describe('customers may update GSTIN, billing address and billing e-mail in the portal; default true'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'TenantSettings' });
export type TenantSettings = z.infer<typeof settingsSchema>;

export const updateSettingsBody = z.object({
  sac_code: sacCodeField().nullable().optional(),
  state_code: stateCodeField().nullable().optional(),
  gstin: gstinField().nullable().optional(),
  credit_note_approval_required: z.boolean().optional(),
  referral_window_days: z.int().min(1).max(3650).optional(),
  referral_reward_amount: fields.minorUnits().optional(),
  invoice_due_days: z.int().min(0).max(365).optional(),
  portal_cancellation: z.enum(PORTAL_CANCELLATION).optional(),
  portal_plan_change: z.boolean().optional(),
  portal_quantity_change: z.boolean().optional(),
  portal_billing_details: z.boolean().optional(),
});
export type UpdateSettingsBody = z.infer<typeof updateSettingsBody>;
