import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { gstinField, stateCodeField } from '../tax/index.js';

/** Uppercase letters, digits, "/" and "-", at most 9, so `{prefix}{sequence}` fits GST's 16 characters. */
export const invoicePrefix = z
  .string()
  .regex(/^[A-Z0-9/-]{1,9}$/, 'must be 1 to 9 uppercase letters, digits, "/" or "-"');

export const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
  .transform((v) => v.toUpperCase());

export const postalAddress = z.object({
  line1: fields.text(200).optional(),
  line2: fields.text(200).optional(),
  city: fields.text(100).optional(),
  state_code: fields.text(10).optional(),
  postal_code: fields.text(20).optional(),
  country: countryCode.optional(),
});

/**
 * The address as answered. Responses are encoded through their schema, and a schema with a
 * transform (countryCode upper-cases) cannot encode: every entity with an address answered 500.
 */
const postalAddressResponse = z.object({
  line1: z.string().optional(),
  line2: z.string().optional(),
  city: z.string().optional(),
  state_code: z.string().optional(),
  postal_code: z.string().optional(),
  country: z.string().optional(),
});

export const createEntityBody = z.object({
  name: fields.requiredText(200),
  legal_name: fields.requiredText(200).optional(),
  invoice_prefix: invoicePrefix,
  country_code: countryCode.default('IN'),
  state_code: stateCodeField().optional(),
  gstin: gstinField().optional(),
  address: postalAddress.optional(),
});
export type CreateEntityBody = z.infer<typeof createEntityBody>;

export const updateEntityBody = z.object({
  name: fields.requiredText(200).optional(),
  legal_name: fields.requiredText(200).optional(),
  invoice_prefix: invoicePrefix.optional(),
  state_code: stateCodeField().nullable().optional(),
  gstin: gstinField().nullable().optional(),
  address: postalAddress.nullable().optional(),
});
export type UpdateEntityBody = z.infer<typeof updateEntityBody>;

export const entitySchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    name: z.string(),
    legal_name: z.string(),
    is_primary: z.boolean(),
    tb_ledger_id: z.int(),
    invoice_prefix: z.string(),
    country_code: z.string(),
    state_code: z.string().nullable(),
    gstin: z.string().nullable(),
    address: postalAddressResponse.nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'LegalEntity' });
export type LegalEntity = z.infer<typeof entitySchema>;
