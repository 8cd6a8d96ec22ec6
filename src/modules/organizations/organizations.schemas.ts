import { z } from 'zod';

export const createOrganizationBody = z.object({
  name: z.string().trim().min(1).max(200),
  reporting_currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code'),
});

export const attachTenantBody = z.object({
  join_code: z.string().min(1).max(200).describe('the code shown when the organization was created (or its join code rotated)'),
});

export const fxRateBody = z.object({
  rate: z
    .union([z.string().max(40), z.number().positive()])
    .describe('units of the reporting currency per one unit of this currency, as an exact decimal (a string keeps every digit)'),
  effective_date: z.string().max(10).optional().describe('YYYY-MM-DD; default today'),
});

export const memberParams = z.object({ id: z.uuid({ message: 'must be a UUID' }), tenant_id: z.uuid({ message: 'must be a UUID' }) });
export const fxParams = z.object({ id: z.uuid({ message: 'must be a UUID' }), currency: z.string().min(1).max(64).describe('ISO 4217 code') });
export const consolidatedQuery = z.object({ date: z.string().max(10).optional().describe('YYYY-MM-DD; default today') });

export const organizationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    reporting_currency: z.string(),
    join_code: z.string().optional().describe('shown only when created or rotated'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Organization' });

export const organizationTenantSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    email: z.string(),
    data_region: z.string(),
    base_currency: z.string(),
    organization_id: z.uuid().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'OrganizationTenant' });

export const fxRateSchema = z.object({ currency: z.string(), rate: z.string(), effective_date: z.string(), created_at: z.string() }).meta({ id: 'FxRate' });

export const consolidatedMrrSchema = z
  .object({
    organization_id: z.uuid(),
    reporting_currency: z.string(),
    date: z.string(),
    total_mrr: z.int().nullable(),
    tenants: z.array(
      z.object({
        tenant_id: z.uuid(),
        name: z.string(),
        mrr_reporting: z.int().nullable(),
        currencies: z.array(
          z.object({
            currency: z.string(),
            mrr: z.int(),
            snapshot_date: z
              .string()
              .nullable()
              .describe('the day of the snapshot read; null for today, computed on read from the subscriptions as they are now'),
            rate: z.string().nullable(),
            mrr_reporting: z.int().nullable(),
          }),
        ),
      }),
    ),
    missing_rates: z.array(z.object({ currency: z.string(), tenant_ids: z.array(z.uuid()) })),
  })
  .meta({ id: 'ConsolidatedMrr' });
