import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const PROVIDERS = ['quickbooks', 'xero', 'zoho_books'] as const;
export const accountingProvider = z.enum(PROVIDERS, { message: `must be one of ${PROVIDERS.join(', ')}` });

export const providerParams = z.object({ provider: accountingProvider });

const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' }).max(2000);

export const connectBody = z.object({
  redirect_uri: httpUrl.optional().describe("where the browser lands after the provider (default: the dashboard); on KOSH_PUBLIC_URL's origin, else 400"),
  state: z.string().max(500).optional().describe('opaque; handed back on the redirect'),
});
export type ConnectBody = z.infer<typeof connectBody>;

export const connectResponse = z.object({ auth_url: z.string(), provider: accountingProvider, expires_in: z.int() });

/** The provider's redirect. Unknown parameters (Zoho's `location`, `accounts-server`) are ignored. */
export const callbackQuery = z.object({
  code: z.string().max(4000).optional(),
  state: z.string().max(500).optional(),
  realmId: z.string().max(100).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});
export type CallbackQuery = z.infer<typeof callbackQuery>;

const taxMappingShape = z.object({
  tax_codes: z.record(z.string().regex(/^(intra_state|inter_state|export|none):\d+(\.\d+)?$/, 'keys look like intra_state:18'), z.string().max(200)),
  accounts: z.object({ income: z.string().max(200), bank: z.string().max(200), tds_receivable: z.string().max(200) }),
  item: z.string().max(200),
});

export const taxMappingBody = z.object({
  tax_codes: taxMappingShape.shape.tax_codes.optional().describe('merged over the defaults; e.g. { "intra_state:18": "GST 18%" }'),
  accounts: taxMappingShape.shape.accounts.partial().optional(),
  item: z.string().max(200).optional(),
});
export type TaxMappingBody = z.infer<typeof taxMappingBody>;

export const connectionSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('accounting_connection'),
    tenant_id: z.uuid(),
    provider: accountingProvider,
    status: z.enum(['active', 'reconnect_required', 'error']),
    external_tenant_id: z.string(),
    external_tenant_name: z.string().nullable(),
    tax_mapping: taxMappingShape,
    last_error: z.string().nullable(),
    last_synced_at: fields.timestamp().nullable(),
    connected_at: fields.timestamp(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'AccountingConnection' });
export type AccountingConnection = z.infer<typeof connectionSchema>;

export const deletedConnectionSchema = z.object({ id: z.uuid(), deleted: z.literal(true) });

export const recordTypes = ['customer', 'invoice', 'payment', 'payment_tds', 'credit_note', 'refund'] as const;

export const syncBody = z.object({
  connection_id: z.uuid().optional().describe('default: every active connection'),
});

export const syncRunSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('accounting_sync_run'),
    connection_id: z.uuid(),
    provider: accountingProvider,
    status: z.enum(['queued', 'running', 'rate_limited', 'succeeded', 'failed', 'paused']),
    synced: z.int(),
    failed: z.int(),
    skipped: z.int(),
    last_error: z.string().nullable(),
    started_at: fields.timestamp().nullable(),
    finished_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'AccountingSyncRun' });
export type SyncRun = z.infer<typeof syncRunSchema>;

export const syncStatusQuery = z.object({
  connection_id: z.uuid().optional(),
  status: z.enum(['pending', 'synced', 'failed', 'voided']).optional(),
  record_type: z.enum(recordTypes).optional(),
});

export const syncRecordSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('accounting_sync_record'),
    connection_id: z.uuid(),
    record_type: z.enum(recordTypes),
    record_id: z.uuid(),
    external_id: z.string().nullable(),
    status: z.enum(['pending', 'synced', 'failed', 'voided']),
    last_error: z.string().nullable(),
    attempts: z.int(),
    synced_at: fields.timestamp().nullable(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'AccountingSyncRecord' });

export const syncStatusResponse = z.object({
  data: z.array(syncRecordSchema),
  object: z.literal('list'),
  has_more: z.boolean(),
  total_count: z.int().min(0),
  /** The latest run of each connection. */
  runs: z.array(syncRunSchema),
});

/** A calendar date: `2026-02-30` is refused, not rolled over into March. */
const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date like 2026-04-01')
  .refine((d) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) return true; // the pattern's own message says it
    const t = Date.parse(`${d}T00:00:00Z`);
    return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d;
  }, 'is not a calendar date');
export const tallyExportQuery = z
  .object({
    from: isoDate,
    to: isoDate,
    entity_id: z.uuid().optional().describe("the legal entity whose books the file holds (default: the primary); dates are in the entity's time zone"),
  })
  .refine((q) => q.from <= q.to, { path: ['to'], message: 'must not be before from' })
  .refine((q) => !(Date.parse(`${q.to}T00:00:00Z`) - Date.parse(`${q.from}T00:00:00Z`) > 400 * 86_400_000), {
    path: ['to'],
    message: 'the range is at most 400 days',
  });
