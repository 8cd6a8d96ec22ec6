import { sql } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { gstinStateCode } from '../tax/index.js';
import { canonicalExchangeRate } from '../../platform/money.js';
import { FY_PLACEHOLDER } from './numbering.js';
import { afaFreeLimit } from './emandate.js';
import type { CreateEntityBody, EinvoicingCredentials, ExchangeRate, LegalEntity, PutExchangeRateBody, UpdateEntityBody } from './entities.schemas.js';
import {
  findEntity,
  findExchangeRate,
  listExchangeRateRows,
  upsertExchangeRate,
  type ExchangeRateRow,
  findPrimaryEntity,
  insertEntity,
  listEntityRows,
  nextLedgerId,
  prefixTaken,
  tenantBaseCurrency,
  updateEntityRow,
  type EntityRow,
} from './entities.repository.js';

export function toEntity(row: EntityRow): LegalEntity {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    legal_name: row.legal_name,
    is_primary: row.is_primary,
    tb_ledger_id: row.tb_ledger_id,
    invoice_prefix: row.invoice_prefix,
    country_code: row.country_code,
    state_code: row.state_code,
    gstin: row.gstin,
    address: row.address,
    lut: row.lut,
    export_refund_claim: row.export_refund_claim,
    lut_missing: row.lut_missing,
    time_zone: row.time_zone,
    functional_currency: row.functional_currency,
    aato_band: row.aato_band,
    number_series_reset: row.number_series_reset,
    fx_revaluation: row.fx_revaluation,
    emandate: {
      category: row.emandate_category,
      afa_limit: row.emandate_afa_limit,
      afa_free_limit: afaFreeLimit(row),
      grievance_contact: row.grievance_contact,
    },
    einvoicing: { enabled: row.einvoicing_enabled, provider: row.einvoicing_provider, credentials_set: row.einvoicing_credentials !== null },
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/**
 * GST identity rules: a GSTIN belongs to an Indian entity, and its first two digits are the
 * entity's state; a state given alongside must agree.
 */
function resolveTaxIdentity(country: string, stateCode: string | null | undefined, gstin: string | null | undefined) {
  if (gstin && country !== 'IN') throw errors.invalidField('gstin', 'only entities in India (country_code IN) have a GSTIN');
  if (stateCode && country !== 'IN') throw errors.invalidField('state_code', 'GST state codes apply to entities in India only');
  if (gstin && stateCode && gstinStateCode(gstin) !== stateCode) {
    throw errors.invalidField('state_code', `does not match the GSTIN's state ${gstinStateCode(gstin)}`);
  }
  return { state_code: stateCode ?? (gstin ? gstinStateCode(gstin) : null), gstin: gstin ?? null };
}

/** The columns an `emandate` update sets (only the keys given). */
function emandatePatch(input: UpdateEntityBody['emandate']) {
  if (!input) return {};
  return {
    ...(input.category !== undefined ? { emandate_category: input.category } : {}),
    ...(input.afa_limit !== undefined ? { emandate_afa_limit: input.afa_limit } : {}),
    ...(input.grievance_contact !== undefined ? { grievance_contact: input.grievance_contact } : {}),
  };
}

async function lockLedgerAllocation(ctx: Ctx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`entities:${ctx.tenantId}`}, 0))`.execute(ctx.tx);
}

/**
 * A series that restarts every financial year repeats its numbers across years: Rule 46(b) wants
 * them unique within a year only, but Kosh keeps every number of an entity unique, so the prefix
 * must carry the year (`{FY}`) — decision 0364.
 */
function assertSeriesReset(reset: 'never' | 'financial_year', invoicePrefix: string): 'never' | 'financial_year' {
  if (reset === 'financial_year' && !invoicePrefix.includes(FY_PLACEHOLDER)) {
    throw errors.invalidField(
      'invoice_prefix',
      'a series that restarts every financial year needs {FY} in its prefix (e.g. INV/{FY}/), so the numbers of different years stay distinct',
    );
  }
  return reset;
}

export async function createEntity(ctx: Ctx, input: CreateEntityBody, options: { primary?: boolean } = {}): Promise<LegalEntity> {
  await lockLedgerAllocation(ctx);
  if (await prefixTaken(ctx.tx, ctx.tenantId, input.invoice_prefix)) {
    throw errors.conflict(`invoice_prefix '${input.invoice_prefix}' is already used by another entity`, 'invoice_prefix_taken');
  }
  const tax = resolveTaxIdentity(input.country_code, input.state_code, input.gstin);
  const row: EntityRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    name: input.name,
    legal_name: input.legal_name ?? input.name,
    is_primary: options.primary ?? false,
    tb_ledger_id: await nextLedgerId(ctx.tx, ctx.tenantId),
    invoice_prefix: input.invoice_prefix,
    credit_note_prefix: 'CN-',
    quote_prefix: 'QT-',
    country_code: input.country_code,
    ...tax,
    address: input.address ?? null,
    lut: input.lut ?? true,
    export_refund_claim: input.export_refund_claim ?? false,
    lut_missing: input.lut_missing ?? 'charge_igst',
    einvoicing_enabled: false,
    einvoicing_provider: null,
    einvoicing_credentials: null,
    // Indian entities date their documents in India; elsewhere UTC until PATCHed.
    time_zone: input.country_code === 'IN' ? 'Asia/Kolkata' : 'UTC',
    // Indian books are kept in rupees (GST is an INR liability); elsewhere the tenant's base currency.
    functional_currency: input.country_code === 'IN' ? 'INR' : await tenantBaseCurrency(ctx.tx, ctx.tenantId),
    aato_band: input.aato_band ?? 'up_to_5_crore',
    number_series_reset: assertSeriesReset(input.number_series_reset ?? 'never', input.invoice_prefix),
    fx_revaluation: input.fx_revaluation ?? 'monthly',
    emandate_category: 'standard',
    emandate_afa_limit: null,
    grievance_contact: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertEntity(ctx.tx, { ...row, address: row.address ? JSON.stringify(row.address) : null });
  return toEntity(row);
}

export async function getEntity(ctx: ReadCtx, id: string): Promise<LegalEntity> {
  const row = await findEntity(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('entity');
  return toEntity(row);
}

export async function getPrimaryEntity(ctx: ReadCtx): Promise<LegalEntity> {
  const row = await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!row) throw new Error(`tenant ${ctx.tenantId} has no primary entity`);
  return toEntity(row);
}

export async function listEntities(ctx: ReadCtx, page: Page): Promise<{ entities: LegalEntity[]; total: number }> {
  const { rows, total } = await listEntityRows(ctx.tx, ctx.tenantId, page);
  return { entities: rows.map(toEntity), total };
}

/**
 * The sealing of IRP credentials, done by the caller that holds the secret box (routes hold
 * `deps.secrets`; services only ever see the sealed text).
 */
export type SealCredentials = (credentials: EinvoicingCredentials, aad: string) => string;

export function einvoicingCredentialsAad(tenantId: string, entityId: string): string {
  return `tenant:${tenantId}:einvoicing:${entityId}`;
}

/** E-invoicing needs a GSTIN (the IRN is made from it) and, except in the sandbox, credentials. */
function resolveEinvoicing(ctx: Ctx, current: EntityRow, gstin: string | null, input: UpdateEntityBody, seal?: SealCredentials) {
  const settings = input.einvoicing;
  if (!settings) {
    if (current.einvoicing_enabled && !gstin) throw errors.invalidField('gstin', 'e-invoicing is on for this entity; it needs its GSTIN');
    return {};
  }
  if (settings.enabled && !gstin) throw errors.invalidField('einvoicing.enabled', "e-invoicing needs the entity's GSTIN; set gstin first");
  let sealed = current.einvoicing_credentials;
  if (settings.credentials) {
    if (!seal) throw new Error('updateEntity needs a sealer to store IRP credentials');
    sealed = seal(settings.credentials, einvoicingCredentialsAad(ctx.tenantId, current.id));
  }
  if (settings.enabled && settings.provider !== 'sandbox' && !sealed) {
    throw errors.invalidField('einvoicing.credentials', `the ${settings.provider} provider needs the IRP credentials`);
  }
  return { einvoicing_enabled: settings.enabled, einvoicing_provider: settings.provider, einvoicing_credentials: sealed };
}

export async function updateEntity(ctx: Ctx, id: string, input: UpdateEntityBody, seal?: SealCredentials): Promise<LegalEntity> {
  const current = await findEntity(ctx.tx, ctx.tenantId, id);
  if (!current) throw errors.notFound('entity');
  if (input.invoice_prefix && (await prefixTaken(ctx.tx, ctx.tenantId, input.invoice_prefix, id))) {
    throw errors.conflict(`invoice_prefix '${input.invoice_prefix}' is already used by another entity`, 'invoice_prefix_taken');
  }
  const gstin = input.gstin !== undefined ? input.gstin : current.gstin;
  // A new GSTIN without a state moves the state with it; an explicit state must agree.
  const stateCode = input.state_code !== undefined ? input.state_code : input.gstin ? null : current.state_code;
  const tax = resolveTaxIdentity(current.country_code, stateCode, gstin);
  const einvoicing = resolveEinvoicing(ctx, current, tax.gstin, input, seal);
  const row = await updateEntityRow(ctx.tx, ctx.tenantId, id, {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.legal_name !== undefined ? { legal_name: input.legal_name } : {}),
    ...(input.invoice_prefix !== undefined ? { invoice_prefix: input.invoice_prefix } : {}),
    ...(input.address !== undefined ? { address: input.address ? JSON.stringify(input.address) : null } : {}),
    ...(input.lut !== undefined ? { lut: input.lut } : {}),
    ...(input.export_refund_claim !== undefined ? { export_refund_claim: input.export_refund_claim } : {}),
    ...(input.lut_missing !== undefined ? { lut_missing: input.lut_missing } : {}),
    ...(input.time_zone !== undefined ? { time_zone: input.time_zone } : {}),
    ...(input.aato_band !== undefined ? { aato_band: input.aato_band } : {}),
    ...(input.fx_revaluation !== undefined ? { fx_revaluation: input.fx_revaluation } : {}),
    ...emandatePatch(input.emandate),
    ...(input.number_series_reset !== undefined || input.invoice_prefix !== undefined
      ? {
          number_series_reset: assertSeriesReset(input.number_series_reset ?? current.number_series_reset, input.invoice_prefix ?? current.invoice_prefix),
        }
      : {}),
    ...tax,
    ...einvoicing,
    updated_at: ctx.now,
  });
  if (!row) throw errors.notFound('entity');
  return toEntity(row);
}

function toExchangeRate(row: ExchangeRateRow): ExchangeRate {
  return {
    id: row.id,
    entity_id: row.entity_id,
    currency: row.currency,
    rate: row.rate,
    effective_from: toIso(row.effective_from),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** Sets the entity's INR rate for a currency from `effective_from` (default now) on. */
export async function putExchangeRate(ctx: Ctx, entityId: string, input: PutExchangeRateBody): Promise<ExchangeRate> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, entityId);
  if (!entity) throw errors.notFound('entity');
  const row = await upsertExchangeRate(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    entity_id: entity.id,
    currency: input.currency,
    rate: canonicalExchangeRate(input.rate),
    effective_from: input.effective_from ? new Date(input.effective_from) : ctx.now,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  return toExchangeRate(row);
}

export async function listExchangeRates(ctx: ReadCtx, entityId: string): Promise<ExchangeRate[]> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, entityId);
  if (!entity) throw errors.notFound('entity');
  return (await listExchangeRateRows(ctx.tx, ctx.tenantId, entity.id)).map(toExchangeRate);
}

export type InvoiceExchangeRate = { rate: string; source: 'invoice_currency' | 'request' | 'entity_rate_table' } | null;

/**
 * The rate an invoice uses: functional currency per one unit of its currency. For an Indian entity
 * that is INR, the rate GST is determined at (CGST Rules, rule 34): 1 for INR, else the rate the
 * request gave, else the entity's rate in force at `at`; null when none is known. An entity
 * outside India uses the same sources for its own functional currency (DESIGN §19), and none
 * for an invoice in it.
 */
export async function invoiceExchangeRate(
  ctx: ReadCtx,
  entity: EntityRow,
  currency: string,
  given: string | null | undefined,
  at: Date,
): Promise<InvoiceExchangeRate> {
  if (entity.country_code === 'IN' && currency === 'INR') return { rate: '1', source: 'invoice_currency' };
  if (currency === entity.functional_currency) return null;
  if (given) return { rate: canonicalExchangeRate(given), source: 'request' };
  const row = await findExchangeRate(ctx.tx, ctx.tenantId, entity.id, currency, at);
  return row ? { rate: row.rate, source: 'entity_rate_table' } : null;
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { findEntity, findPrimaryEntity } from './entities.repository.js';

/**
 * The entity's rate for `currency` at `at` (functional currency per one unit): '1' for its own
 * functional currency, else its rate table's, else null.
 */
export async function entityRateAt(ctx: Ctx, entityId: string, functionalCurrency: string, currency: string, at: Date): Promise<string | null> {
  if (currency === functionalCurrency) return '1';
  const row = await findExchangeRate(ctx.tx, ctx.tenantId, entityId, currency, at);
  return row?.rate ?? null;
}

export type TransactionRate = { rate: string | null; source: 'functional_currency' | 'request' | 'entity_rate_table' | 'invoice' | null };

/**
 * The rate of money moving on a date (a payment, a refund — Ind AS 21.21: the spot rate of the
 * transaction's date): 1 in the functional currency, else the rate the request gave, else the
 * entity's rate table at `at`, else `fallback` (the document's own rate: then no exchange
 * difference arises), else none.
 */
export async function transactionRate(
  ctx: Ctx,
  entity: Pick<EntityRow, 'id' | 'functional_currency'>,
  currency: string,
  given: string | null | undefined,
  at: Date,
  fallback: string | null,
): Promise<TransactionRate> {
  if (currency === entity.functional_currency) return { rate: '1', source: 'functional_currency' };
  if (given) return { rate: canonicalExchangeRate(given), source: 'request' };
  const row = await findExchangeRate(ctx.tx, ctx.tenantId, entity.id, currency, at);
  if (row) return { rate: row.rate, source: 'entity_rate_table' };
  return fallback ? { rate: fallback, source: 'invoice' } : { rate: null, source: null };
}
