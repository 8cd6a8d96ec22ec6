import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { countryCode } from '../entities/index.js';
import { gstinField, isGstStateCode } from '../tax/index.js';

const email = () => z.email({ message: 'must be an e-mail address' }).max(254);
const phone = () =>
  z
    .string()
    .trim()
    .regex(/^\+?[0-9][0-9 ().-]{3,30}$/, 'must be a phone number: digits, spaces, "(", ")", "-", "." and an optional leading "+"');

/**
 * A billing address. `country` defaults to IN; for India `state_code` is the two-digit GST state
 * code (it decides the place of supply), elsewhere it is free text.
 */
export const billingAddressInput = z
  .object({
    line1: fields.text(200).nullable().optional(),
    line2: fields.text(200).nullable().optional(),
    city: fields.text(100).nullable().optional(),
    state_code: z.string().trim().max(10).nullable().optional(),
    postal_code: fields.text(20).nullable().optional(),
    country: countryCode.default('IN'),
  })
  .superRefine((address, ctx) => {
    if (address.country === 'IN' && address.state_code && !isGstStateCode(address.state_code)) {
      ctx.addIssue({ code: 'custom', path: ['state_code'], message: 'for country IN, must be a two-digit GST state code such as "29"' });
    }
  });
export type BillingAddressInput = z.infer<typeof billingAddressInput>;

export const createCustomerBody = z.object({
  email: email(),
  name: fields.text(200).nullable().optional(),
  external_id: fields.text(255).nullable().optional(),
  phone: phone().nullable().optional(),
  gstin: gstinField().nullable().optional(),
  billing_address: billingAddressInput.nullable().optional(),
  sez: z.boolean().optional().describe('a unit or developer in a Special Economic Zone: its supplies are zero-rated (IGST Act s.16)'),
  metadata: fields.metadata().nullable().optional(),
  test_clock_id: z
    .uuid()
    .nullable()
    .optional()
    .describe('test mode only: the test clock the customer lives on (its billing runs when the clock advances, never at the real time)'),
  parent_customer_id: z
    .uuid()
    .nullable()
    .optional()
    .describe('the parent customer (same tenant) that may pay for this one; a chain is at most 5 levels deep and never a cycle'),
  bill_to: z
    .enum(['self', 'parent'])
    .optional()
    .describe("'parent': this customer's renewals are invoiced to the parent, on its consolidated invoice (needs parent_customer_id); 'self' by default"),
});
export type CreateCustomerBody = z.infer<typeof createCustomerBody>;

/** PUT is a partial update: an absent field is left as it is, null clears an optional one. */
export const updateCustomerBody = z.object({
  email: email().optional(),
  name: fields.text(200).nullable().optional(),
  external_id: fields.text(255).nullable().optional(),
  phone: phone().nullable().optional(),
  gstin: gstinField().nullable().optional(),
  billing_address: billingAddressInput.nullable().optional(),
  sez: z.boolean().optional(),
  metadata: fields.metadata().nullable().optional(),
  parent_customer_id: z
    .uuid()
    .nullable()
    .optional()
    .describe('the parent customer (same tenant) that may pay for this one; a chain is at most 5 levels deep and never a cycle'),
  bill_to: z
    .enum(['self', 'parent'])
    .optional()
    .describe("'parent': this customer's renewals are invoiced to the parent, on its consolidated invoice (needs parent_customer_id); 'self' by default"),
});
export type UpdateCustomerBody = z.infer<typeof updateCustomerBody>;

export const listCustomersQuery = z.object({
  q: z.string().max(200).optional().describe('matches name or e-mail, case-insensitively'),
  email: z.string().max(254).optional().describe('exact e-mail, case-insensitively'),
});

export const billingAddressSchema = z
  .object({
    line1: z.string().nullable(),
    line2: z.string().nullable(),
    city: z.string().nullable(),
    state_code: z.string().nullable(),
    postal_code: z.string().nullable(),
    country: z.string(),
  })
  .meta({ id: 'BillingAddress' });

export const customerSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    email: z.string(),
    name: z.string().nullable(),
    external_id: z.string().nullable(),
    phone: z.string().nullable(),
    gstin: z.string().nullable(),
    billing_address: billingAddressSchema.nullable(),
    sez: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
    test_clock_id: z.uuid().nullable(),
    parent_customer_id: z.uuid().nullable(),
    bill_to: z.enum(['self', 'parent']),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Customer' });

export type Customer = z.infer<typeof customerSchema>;
