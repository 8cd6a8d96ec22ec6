import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { toIso } from '../../platform/time.js';
import { financialYear } from '../tax/index.js';
import type { EntityRow } from './entities.repository.js';
import { findEntity } from './entities.repository.js';
import './entities.tables.js';

/**
 * Letters of Undertaking per financial year (docs/decisions/0282). An LUT (FORM GST RFD-11, CGST
 * Rules rule 96A) lets exports and SEZ supplies go without payment of IGST; it is furnished for a
 * financial year, so each year's is recorded with its ARN.
 * - `lut: false` on the entity: no LUT, exports pay IGST (as before).
 * - `lut: true` and no year recorded: the single flag of old — in force, year unstated.
 * - Years recorded: in force only in a recorded year (by the document's date in the entity's time
 *   zone). In another year an export follows `lut_missing`: `charge_igst` (export with payment of
 *   IGST, IGST Act s.16(3)(b)) or `refuse` (409 lut_missing: record the year's LUT first).
 */
export type LutState = { financialYear: string; inForce: boolean; refuse: boolean };

export async function lutState(ctx: ReadCtx, entity: EntityRow, at: Date): Promise<LutState> {
  const year = financialYear(at, entity.time_zone);
  if (!entity.lut) return { financialYear: year, inForce: false, refuse: false };
  const rows = await ctx.tx
    .selectFrom('entity_luts')
    .select('financial_year')
    .where('tenant_id', '=', ctx.tenantId)
    .where('entity_id', '=', entity.id)
    .execute();
  if (rows.length === 0) return { financialYear: year, inForce: true, refuse: false };
  const inForce = rows.some((r) => r.financial_year === year);
  return { financialYear: year, inForce, refuse: !inForce && entity.lut_missing === 'refuse' };
}

/** The entity as it supplies at `at`: `lut` is whether an LUT is in force then; `lut_refuse` whether an export must be refused. */
export async function entityAt(ctx: ReadCtx, entity: EntityRow, at: Date): Promise<EntityRow & { lut_refuse: LutState | null }> {
  const state = await lutState(ctx, entity, at);
  return { ...entity, lut: state.inForce, lut_refuse: state.refuse ? state : null };
}

/** The refusal of a zero-rated supply without an LUT under `lut_missing: refuse`. */
export function lutMissing(entity: { id: string; lut_refuse: LutState | null }) {
  return errors.conflict(
    `the entity has no Letter of Undertaking for the financial year ${entity.lut_refuse!.financialYear}, and is set to refuse exports without one (lut_missing: refuse): record it with PUT /v1/entities/${entity.id}/luts/${entity.lut_refuse!.financialYear}, or set lut_missing to charge_igst`,
    'lut_missing',
  );
}

function toLut(r: { entity_id: string; financial_year: string; arn: string; created_at: Date | string; updated_at: Date | string }) {
  return { entity_id: r.entity_id, financial_year: r.financial_year, arn: r.arn, created_at: toIso(r.created_at), updated_at: toIso(r.updated_at) };
}

async function entityOrThrow(ctx: ReadCtx, id: string): Promise<EntityRow> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, id);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

/** `PUT /v1/entities/{id}/luts/{financial_year} { arn }`: records (or corrects) a year's LUT; an entity with `lut: false` gets `lut: true`. */
export async function putLut(ctx: Ctx, entityId: string, year: string, arn: string) {
  const entity = await entityOrThrow(ctx, entityId);
  if (!entity.gstin) throw errors.conflict('the entity has no GSTIN: it is not registered for GST, so it has no LUT', 'entity_not_gst_registered');
  const row = await ctx.tx
    .insertInto('entity_luts')
    .values({ tenant_id: ctx.tenantId, entity_id: entityId, financial_year: year, arn, created_at: ctx.now, updated_at: ctx.now })
    .onConflict((oc) => oc.columns(['tenant_id', 'entity_id', 'financial_year']).doUpdateSet({ arn, updated_at: ctx.now }))
    .returningAll()
    .executeTakeFirstOrThrow();
  if (!entity.lut)
    await ctx.tx
      .updateTable('legal_entities')
      .set({ lut: true, updated_at: ctx.now })
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', entityId)
      .execute();
  return toLut(row);
}

/** `GET /v1/entities/{id}/luts`: the years recorded and whether an LUT is in force now. */
export async function listLuts(ctx: ReadCtx, entityId: string) {
  const entity = await entityOrThrow(ctx, entityId);
  const rows = await ctx.tx
    .selectFrom('entity_luts')
    .selectAll()
    .where('tenant_id', '=', ctx.tenantId)
    .where('entity_id', '=', entityId)
    .orderBy('financial_year', 'desc')
    .execute();
  const state = await lutState(ctx, entity, ctx.now);
  return {
    entity_id: entityId,
    lut: entity.lut,
    lut_missing: entity.lut_missing,
    current_financial_year: state.financialYear,
    in_force: state.inForce,
    luts: rows.map(toLut),
  };
}
