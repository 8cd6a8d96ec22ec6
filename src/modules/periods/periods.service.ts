import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { Actor } from '../../platform/auth/actor.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { findEntity, type EntityRow } from '../entities/index.js';
import { localDate, returnPeriodBounds } from '../tax/index.js';
import { closedPeriodsFrom, ensurePeriodRow, findPeriodRow, periodRowsOfEntity, postingFactsOf, type PeriodRow } from './periods.repository.js';
import type { Period, RecordFilingBody } from './periods.schemas.js';
import { transitionPeriod, type GstReturnKind } from './periods.states.js';

const pad = (n: number) => String(n).padStart(2, '0');

/** The reporting period (`YYYY-MM`) an instant falls in, in the entity's zone. */
export function periodOf(instant: Date, timeZone: string): string {
  const d = localDate(instant, timeZone);
  return `${d.year}-${pad(d.month)}`;
}

export function nextPeriod(period: string): string {
  const [y, m] = period.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${pad(m + 1)}`;
}

/** The period's half-open interval `[from, to)` in UTC. */
export function periodBounds(period: string, timeZone: string): { from: Date; to: Date } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return returnPeriodBounds({ year, month }, timeZone);
}

/** `YYYY-MM` (or GSTN's `MMYYYY`) → `YYYY-MM`; anything else → 400 naming `field`. */
export function parsePeriod(text: string, field = 'period'): string {
  const m = /^(\d{4})-(\d{2})$/.exec(text) ?? (/^(\d{2})(\d{4})$/.exec(text) ? ([text, text.slice(2), text.slice(0, 2)] as const) : null);
  const month = m ? Number(m[2]) : 0;
  if (!m || month < 1 || month > 12 || Number(m[1]) < 1970) throw errors.invalidField(field, 'must be a month as YYYY-MM');
  return `${m[1]}-${m[2]}`;
}

function actorLabel(actor: Actor): string {
  return actor.type === 'system' ? 'system' : `${actor.type}:${actor.id}`;
}

function toPeriod(entityId: string, period: string, row: PeriodRow | undefined): Period {
  const filing = (at: Date | null | undefined, arn: string | null | undefined) => (at ? { filed_at: toIso(at), arn: arn ?? null } : undefined);
  const gstr1 = filing(row?.gstr1_filed_at, row?.gstr1_arn);
  const gstr3b = filing(row?.gstr3b_filed_at, row?.gstr3b_arn);
  return {
    entity_id: entityId,
    period,
    status: row?.status ?? 'open',
    closed_at: toIsoOrNull(row?.closed_at),
    closed_by: row?.closed_by ?? null,
    reopened_at: toIsoOrNull(row?.reopened_at),
    reopened_by: row?.reopened_by ?? null,
    reopen_reason: row?.reopen_reason ?? null,
    gst_filed: { ...(gstr1 ? { gstr1 } : {}), ...(gstr3b ? { gstr3b } : {}) },
  };
}

async function entityOf(ctx: ReadCtx, entityId: string): Promise<EntityRow> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, entityId);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

/** The entity and a period that has begun (a month not yet begun → 400). */
export async function resolveBegunPeriod(ctx: Ctx, entityId: string, text: string, field = 'period'): Promise<{ entity: EntityRow; period: string }> {
  const entity = await entityOf(ctx, entityId);
  const period = parsePeriod(text, field);
  if (period > periodOf(ctx.now, entity.time_zone)) throw errors.invalidField(field, `${period} has not begun in ${entity.time_zone}`);
  return { entity, period };
}

/** Every month from the entity's first (or the earliest one closed or filed) to this one, newest first. */
export async function listPeriods(ctx: ReadCtx, entityId: string): Promise<Period[]> {
  const entity = await entityOf(ctx, entityId);
  const rows = new Map((await periodRowsOfEntity(ctx.tx, ctx.tenantId, entity.id)).map((r) => [r.period, r]));
  const current = periodOf(ctx.now, entity.time_zone);
  let first = periodOf(entity.created_at, entity.time_zone);
  for (const p of rows.keys()) if (p < first) first = p;
  const months: string[] = [];
  for (let p = first; p <= current && months.length < 1200; p = nextPeriod(p)) months.push(p);
  return months.reverse().map((p) => toPeriod(entity.id, p, rows.get(p)));
}

export async function closePeriod(ctx: Ctx, entity: EntityRow, period: string, actor: Actor): Promise<Period> {
  const row = await ensurePeriodRow(ctx.tx, ctx.tenantId, entity.id, period, ctx.now);
  const closed = await transitionPeriod(ctx.tx, ctx.tenantId, row, 'close', { closed_at: ctx.now, closed_by: actorLabel(actor), updated_at: ctx.now });
  const shown = toPeriod(entity.id, period, closed);
  await emitEvent(ctx, 'period.closed', shown);
  return shown;
}

export async function reopenPeriod(ctx: Ctx, entityId: string, text: string, actor: Actor, reason: string): Promise<Period> {
  const { entity, period } = await resolveBegunPeriod(ctx, entityId, text);
  const row = await findPeriodRow(ctx.tx, ctx.tenantId, entity.id, period);
  if (!row || row.status !== 'closed') throw errors.conflict(`the period ${period} is open`, 'period_open');
  const reopened = await transitionPeriod(ctx.tx, ctx.tenantId, row, 'reopen', {
    reopened_at: ctx.now,
    reopened_by: actorLabel(actor),
    reopen_reason: reason,
    updated_at: ctx.now,
  });
  const shown = toPeriod(entity.id, period, reopened);
  await emitEvent(ctx, 'period.reopened', shown);
  return shown;
}

/**
 * Marks a return filed: its figures as generated now are stored (and answered from then on), and
 * the month is closed. A return is marked filed once.
 */
export async function recordGstFiling(
  ctx: Ctx,
  entity: EntityRow,
  period: string,
  kind: GstReturnKind,
  body: RecordFilingBody,
  figures: unknown,
  actor: Actor,
): Promise<Period> {
  const filedAt = body.filed_at ? new Date(body.filed_at) : ctx.now;
  if (filedAt > ctx.now) throw errors.invalidField('filed_at', 'is in the future');
  const row = await ensurePeriodRow(ctx.tx, ctx.tenantId, entity.id, period, ctx.now);
  const wasOpen = row.status === 'open';
  const filed = await transitionPeriod(
    ctx.tx,
    ctx.tenantId,
    row,
    'file',
    {
      [`${kind}_filed_at`]: filedAt,
      [`${kind}_arn`]: body.arn ?? null,
      [`${kind}_return`]: JSON.stringify(figures),
      ...(wasOpen ? { closed_at: ctx.now, closed_by: actorLabel(actor) } : {}),
      updated_at: ctx.now,
    },
    kind,
  );
  const shown = toPeriod(entity.id, period, filed);
  if (wasOpen) await emitEvent(ctx, 'period.closed', shown);
  return shown;
}

/** The figures of a filed return (null: not filed, so the return is generated from the books). */
export async function filedReturn(ctx: ReadCtx, entityId: string, period: string, kind: GstReturnKind): Promise<unknown> {
  const row = await findPeriodRow(ctx.tx, ctx.tenantId, entityId, period);
  return row?.[`${kind}_return`] ?? null;
}

/**
 * Whether documents dated at `instant` may still change: its month is open and no return of it
 * is marked filed (a void or edit there would change what was filed).
 */
export async function isPeriodOpenAt(ctx: Ctx, entity: Pick<EntityRow, 'id' | 'time_zone'>, instant: Date): Promise<{ open: boolean; period: string }> {
  const period = periodOf(instant, entity.time_zone);
  const row = await findPeriodRow(ctx.tx, ctx.tenantId, entity.id, period);
  const open = !row || (row.status === 'open' && !row.gstr1_filed_at && !row.gstr3b_filed_at);
  return { open, period };
}

/**
 * When a posting made now is dated, per entity, and in which currency its books are kept: now,
 * unless this month is closed — then the first instant of the first open month after it (DESIGN
 * §18: nothing posts into a closed period). One query for both.
 */
export async function postingTerms(ctx: Ctx, entityIds: string[]): Promise<Map<string, { at: Date; functionalCurrency: string }>> {
  // No zone is more than 14 hours from UTC: no local month of now starts before this one.
  const earliest = periodOf(new Date(ctx.now.getTime() - 14 * 3600_000), 'UTC');
  const rows = await postingFactsOf(ctx.tx, ctx.tenantId, [...new Set(entityIds)], earliest);
  const byEntity = new Map<string, { functionalCurrency: string; timeZone: string; closed: Set<string> }>();
  for (const r of rows) {
    const facts = byEntity.get(r.id) ?? { functionalCurrency: r.functional_currency, timeZone: r.time_zone, closed: new Set<string>() };
    if (r.period !== null) facts.closed.add(r.period);
    byEntity.set(r.id, facts);
  }
  const terms = new Map<string, { at: Date; functionalCurrency: string }>();
  for (const [entityId, facts] of byEntity) {
    const current = periodOf(ctx.now, facts.timeZone);
    let p = current;
    while (facts.closed.has(p)) p = nextPeriod(p);
    terms.set(entityId, { at: p === current ? ctx.now : periodBounds(p, facts.timeZone).from, functionalCurrency: facts.functionalCurrency });
  }
  return terms;
}

/** When a posting made now is dated, per entity (see postingTerms). */
export async function postingDates(ctx: Ctx, entityIds: string[]): Promise<Map<string, Date>> {
  const terms = await postingTerms(ctx, entityIds);
  return new Map(entityIds.map((id) => [id, terms.get(id)?.at ?? ctx.now]));
}

/** The first month from `period` on that is not closed (its first instant is where a posting for `period` may land). */
export async function firstOpenPeriodFrom(ctx: Ctx, entityId: string, period: string): Promise<string> {
  const months = new Set((await closedPeriodsFrom(ctx.tx, ctx.tenantId, [entityId], period)).map((c) => c.period));
  let p = period;
  while (months.has(p)) p = nextPeriod(p);
  return p;
}

export async function postingDate(ctx: Ctx, entityId: string): Promise<Date> {
  return (await postingDates(ctx, [entityId])).get(entityId)!;
}
