import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';
import { EXCHANGE_RATE_PATTERN } from '../../platform/money.js';
import { gstinField, stateCodeField } from '../tax/index.js';

/**
 * Rule 46(b): a number of at most 16 characters — letters, digits, "-" and "/" — unique in a
 * financial year. Uppercase only: numbers are case-insensitive (GSTR-1; the IRP from 1 June 2025).
 * `{FY}` writes the financial year (`INV/{FY}/` → `INV/25-26/`). At most 14 characters once
 * written, leaving at least 2 for the sequence (decision 0364).
 */
export const invoicePrefix = z
  .string()
  .max(20)
  .regex(
    /^([A-Z0-9/-]|\{FY\})+$/,
    'must be uppercase letters, digits, "/" or "-" (document numbers are case-insensitive), optionally with {FY} for the financial year',
  )
  .refine((p) => p.replaceAll('{FY}', '25-26').length <= 14, "must be at most 14 characters ({FY} counts 5) so a number fits Rule 46(b)'s 16");

export const aatoBand = z
  .enum(['up_to_5_crore', 'above_5_crore', '10_crore_or_more'])
  .describe('aggregate annual turnover of the previous year: 6-digit HSN in GSTR-1 above ₹5 crore; the IRP 30-day limit from ₹10 crore');
/** E-mandate settings of the merchant (docs/decisions/0520). */
export const emandateCategory = z
  .enum(['standard', 'mutual_fund_subscription', 'insurance_premium', 'credit_card_bill'])
  .describe(
    "RBI e-mandate framework: a debit without the customer's additional authentication up to ₹15 000 (standard), ₹1 lakh for mutual fund subscriptions, insurance premiums and credit card bills",
  );
export const emandateSettings = z.object({
  category: emandateCategory.optional(),
  afa_limit: z
    .int()
    .positive()
    .max(1_000_000_000_00)
    .nullable()
    .optional()
    .describe("an explicit limit (paise) of a mandate debit without the customer's authentication, overriding the category's; null: the category's"),
  grievance_contact: fields
    .text(300)
    .nullable()
    .optional()
    .describe('who the customer contacts about a mandate debit (named in the post-debit notice): e-mail, phone or grievance officer'),
});
export const numberSeriesReset = z
  .enum(['never', 'financial_year'])
  .describe('financial_year: every series restarts at 1 on 1 April (the prefix must contain {FY}, so numbers stay unique)');

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

/** How often open foreign-currency receivables are restated at the closing rate (decision 0650). */
export const fxRevaluation = z
  .enum(['monthly', 'year_end', 'off'])
  .describe(
    'revaluation of open foreign-currency receivables at the closing rate (decision 0650): monthly (default) at every month end, year_end only at the end of the financial year (31 March), off never',
  );

export const createEntityBody = z.object({
  name: fields.singleLineName(200),
  legal_name: fields.singleLineName(200).optional(),
  invoice_prefix: invoicePrefix,
  country_code: countryCode.default('IN'),
  state_code: stateCodeField().optional(),
  gstin: gstinField().optional(),
  address: postalAddress.optional(),
  lut: z.boolean().optional().describe('has a Letter of Undertaking: exports and SEZ supplies without IGST (default true); false charges IGST'),
  export_refund_claim: z
    .boolean()
    .optional()
    .describe('exports with payment of IGST (lut false): the IGST paid is claimed back, e-invoice RefClm Y (default false: N)'),
  lut_missing: z
    .enum(['charge_igst', 'refuse'])
    .optional()
    .describe('once LUTs are recorded per financial year: an export in a year without one is charged IGST (default) or refused (409 lut_missing)'),
  aato_band: aatoBand.optional(),
  number_series_reset: numberSeriesReset.optional(),
  fx_revaluation: fxRevaluation.optional(),
});
export type CreateEntityBody = z.infer<typeof createEntityBody>;

/** An IANA time zone name the runtime knows (`Asia/Kolkata`). */
export const timeZoneField = z
  .string()
  .max(64)
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone such as Asia/Kolkata');

/**
 * E-invoicing settings (DESIGN §15). `credentials` are the IRP's (NIC or GSP) and are sealed at
 * rest, never answered; the built-in `sandbox` needs none.
 */
export const einvoicingSettings = z.object({
  enabled: z.boolean(),
  provider: z.enum(['sandbox', 'nic', 'gsp']).default('sandbox'),
  credentials: z
    .object({
      username: fields.text(100),
      password: fields.text(200),
      client_id: fields.text(200).optional(),
      client_secret: fields.text(200).optional(),
      /**
       * Refused: the IRP's and GSP's addresses come from the deployment (KOSH_IRP_NIC_URL,
       * KOSH_IRP_GSP_URL), never from a tenant (DESIGN §21, decision 0211).
       */
      base_url: z
        .never({ error: 'is not accepted: the IRP address is set by the deployment (KOSH_IRP_NIC_URL or KOSH_IRP_GSP_URL); choose the provider by name' })
        .optional()
        .describe('refused (400): the IRP address is set by the deployment'),
      /** The IRP's RSA public key (PEM) that encrypts the app key at authentication. */
      public_key: fields.text(4000).optional(),
    })
    .optional(),
});
export type EinvoicingSettings = z.infer<typeof einvoicingSettings>;
export type EinvoicingCredentials = NonNullable<EinvoicingSettings['credentials']>;

export const updateEntityBody = z.object({
  name: fields.singleLineName(200).optional(),
  legal_name: fields.singleLineName(200).optional(),
  invoice_prefix: invoicePrefix.optional(),
  state_code: stateCodeField().nullable().optional(),
  gstin: gstinField().nullable().optional(),
  address: postalAddress.nullable().optional(),
  lut: z.boolean().optional().describe('has a Letter of Undertaking: exports and SEZ supplies without IGST (default true); false charges IGST'),
  export_refund_claim: z
    .boolean()
    .optional()
    .describe('exports with payment of IGST (lut false): the IGST paid is claimed back, e-invoice RefClm Y (default false: N)'),
  lut_missing: z
    .enum(['charge_igst', 'refuse'])
    .optional()
    .describe('once LUTs are recorded per financial year: an export in a year without one is charged IGST (default) or refused (409 lut_missing)'),
  time_zone: timeZoneField.optional(),
  einvoicing: einvoicingSettings.optional(),
  aato_band: aatoBand.optional(),
  number_series_reset: numberSeriesReset.optional(),
  fx_revaluation: fxRevaluation.optional(),
  emandate: emandateSettings.optional(),
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
    lut: z.boolean(),
    export_refund_claim: z.boolean(),
    lut_missing: z.enum(['charge_igst', 'refuse']),
    time_zone: z.string(),
    functional_currency: z.string().describe('the currency its books are kept in (INR for an Indian entity); every journal line carries its value in it'),
    aato_band: aatoBand,
    number_series_reset: numberSeriesReset,
    fx_revaluation: fxRevaluation,
    emandate: z.object({
      category: emandateCategory,
      afa_limit: z.int().nullable(),
      afa_free_limit: z.int().describe('the limit in force (paise): afa_limit, else the category’s'),
      grievance_contact: z.string().nullable(),
    }),
    einvoicing: z.object({ enabled: z.boolean(), provider: z.enum(['sandbox', 'nic', 'gsp']).nullable(), credentials_set: z.boolean() }),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'LegalEntity' });
export type LegalEntity = z.infer<typeof entitySchema>;

/** A rate as the API takes it: a decimal string, never a JSON number (no float ever holds money). */
export const exchangeRateField = () =>
  z
    .string()
    .regex(EXCHANGE_RATE_PATTERN, 'must be a decimal string such as "83.2575" (at most 9 digits before the point and 6 after)')
    .refine((v) => /[1-9]/.test(v), 'must be greater than zero');

export const putExchangeRateBody = z
  .object({
    currency: fields.currency().refine((c) => c !== 'INR', 'INR is the base currency; its rate is 1'),
    rate: exchangeRateField().describe('INR per one unit of the currency'),
    effective_from: z.iso.datetime({ offset: true }).optional().describe('defaults to now; the rate applies to invoices finalized from then on'),
  })
  .meta(bodyExample({ currency: 'USD', rate: '83.2575', effective_from: '2026-04-01T00:00:00.000Z' }));
export type PutExchangeRateBody = z.infer<typeof putExchangeRateBody>;

export const exchangeRateSchema = z
  .object({
    id: z.uuid(),
    entity_id: z.uuid(),
    currency: z.string(),
    rate: z.string().describe('INR per one unit of the currency, a decimal string'),
    effective_from: fields.timestamp(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'ExchangeRate' });
export type ExchangeRate = z.infer<typeof exchangeRateSchema>;

export const putLutBody = z.object({
  arn: fields.requiredText(30).describe('the ARN the GST portal gave the LUT (FORM GST RFD-11)'),
});
export const lutParams = z.object({
  id: z.uuid({ message: 'must be a UUID' }),
  financial_year: z
    .string()
    .regex(/^[0-9]{4}-[0-9]{2}$/, 'must be a financial year such as 2026-27')
    .refine((v) => (Number(v.slice(0, 4)) + 1) % 100 === Number(v.slice(5)), 'the two years must follow each other, e.g. 2026-27')
    .meta({ example: '2026-27' }),
});
export const lutSchema = z
  .object({ entity_id: z.uuid(), financial_year: z.string(), arn: z.string(), created_at: fields.timestamp(), updated_at: fields.timestamp() })
  .meta({ id: 'EntityLut' });
export const lutListSchema = z
  .object({
    entity_id: z.uuid(),
    lut: z.boolean(),
    lut_missing: z.enum(['charge_igst', 'refuse']),
    current_financial_year: z.string(),
    in_force: z.boolean().describe('exports dated now go without IGST'),
    luts: z.array(lutSchema),
  })
  .meta({ id: 'EntityLuts' });
