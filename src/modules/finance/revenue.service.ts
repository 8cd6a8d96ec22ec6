import type { Kysely } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import type { EventListener, EventPayload } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { mulDivRoundHalfUp } from '../../platform/money.js';
import { findEntity } from '../entities/index.js';
import { periodBounds, periodOf } from '../periods/index.js';
import { Account, postEntries, postEntry, type Posting, type PostingLine } from '../ledger/index.js';
import { getTenant } from '../tenants/index.js';
import {
  activeSchedulesOfInvoice,
  activeSchedulesOfSubscription,
  deferredBalance,
  dueSchedules,
  insertSchedules,
  lockSchedules,
  recognizedByMonth,
  recordRecognition,
  updateSchedule,
  type ScheduleRow,
} from './revenue.repository.js';
import type { Mode } from '../../platform/auth/tenant-mode.js';

export const DAY_MS = 86_400_000;

/** Whole days of a service period (at least one). */
export function periodDays(start: Date, end: Date): number {
  return Math.max(1, Math.round((end.getTime() - start.getTime()) / DAY_MS));
}

/** Whole days elapsed since the period started, within 0..totalDays. */
export function elapsedDays(start: Date, totalDays: number, now: Date): number {
  return Math.min(totalDays, Math.max(0, Math.floor((now.getTime() - start.getTime()) / DAY_MS)));
}

/**
 * What should be recognized after `day` whole days: what was recognized at the last adjustment
 * (base) plus the rest spread evenly over the remaining days, rounded half-up on the cumulative
 * amount — so the daily parts always sum exactly to the whole at the last day.
 */
export function cumulativeTarget(s: Pick<ScheduleRow, 'amount' | 'total_days' | 'base_recognized' | 'base_day'>, day: number): number {
  const amount = Number(s.amount);
  const base = Number(s.base_recognized);
  if (day >= s.total_days || s.base_day >= s.total_days) return amount;
  if (day <= s.base_day) return base;
  return base + mulDivRoundHalfUp(amount - base, day - s.base_day, s.total_days - s.base_day);
}

type InvoiceEvent = {
  id: string;
  entity_id: string;
  customer_id: string;
  subscription_id: string | null;
  currency: string;
  subtotal: number;
  /** Functional currency per unit of `currency` (DESIGN §19): the deferral is valued at the invoice's rate. */
  exchange_rate?: string | null;
  lines: { id: string; amount: number; period_start: string | null; period_end: string | null }[];
};

function invoiceOf(event: EventPayload): InvoiceEvent | null {
  const o = event.data.object as Partial<InvoiceEvent>;
  if (typeof o.id !== 'string' || typeof o.entity_id !== 'string' || !Array.isArray(o.lines)) return null;
  return o as InvoiceEvent;
}

/**
 * At finalization of a subscription invoice: the revenue of every line with a service period
 * moves from revenue (4000) to deferred revenue (2400) in a separate entry (`revenue.deferred`),
 * and a schedule per line recognizes it day by day. One-off invoices (no subscription, or lines
 * without a period) stay recognized at once.
 */
async function deferInvoices(ctx: Ctx, invoices: InvoiceEvent[]): Promise<void> {
  const postings: Posting[] = [];
  const schedules: Parameters<typeof insertSchedules>[1] = [];
  const ledgers = new Map<string, number>();
  for (const inv of invoices) {
    if (!inv.subscription_id) continue;
    let cap = inv.subtotal;
    const parts: { line: InvoiceEvent['lines'][number]; amount: number; start: Date; days: number }[] = [];
    for (const line of inv.lines) {
      if (!line.period_start || !line.period_end || line.amount <= 0 || cap <= 0) continue;
      const start = new Date(line.period_start);
      const end = new Date(line.period_end);
      if (!(end.getTime() > start.getTime())) continue;
      const amount = Math.min(line.amount, cap);
      cap -= amount;
      parts.push({ line, amount, start, days: periodDays(start, end) });
    }
    if (parts.length === 0) continue;
    let ledgerId = ledgers.get(inv.entity_id);
    if (ledgerId === undefined) {
      const entity = await findEntity(ctx.tx, ctx.tenantId, inv.entity_id);
      if (!entity) continue;
      ledgerId = entity.tb_ledger_id;
      ledgers.set(inv.entity_id, ledgerId);
    }
    const total = parts.reduce((a, p) => a + p.amount, 0);
    postings.push({
      ledgerId,
      entityId: inv.entity_id,
      kind: 'revenue.deferred',
      referenceType: 'invoice',
      referenceId: inv.id,
      currency: inv.currency,
      description: 'Revenue of service periods deferred',
      rate: inv.exchange_rate ?? null,
      lines: [
        { account: Account.REVENUE, debit: total, invoiceId: inv.id },
        { account: Account.DEFERRED_REVENUE, credit: total, invoiceId: inv.id, customerId: inv.customer_id, mirror: true },
      ],
    });
    for (const p of parts) {
      schedules.push({
        tenant_id: ctx.tenantId,
        id: newId(),
        invoice_id: inv.id,
        invoice_line_id: p.line.id,
        subscription_id: inv.subscription_id,
        customer_id: inv.customer_id,
        entity_id: inv.entity_id,
        ledger_id: ledgerId,
        currency: inv.currency,
        period_start: p.start,
        total_days: p.days,
        amount: p.amount,
        status: 'active',
        created_at: ctx.now,
        updated_at: ctx.now,
      });
    }
  }
  if (postings.length === 0) return;
  await postEntries(ctx, postings);
  await insertSchedules(ctx.tx, schedules);
}

/**
 * Takes `takes[i]` off the unrecognized part of `schedules[i]` and books it Dr deferred revenue /
 * Cr revenue reversals (`revenue.adjusted`): that much of the credit note's or void's reversal
 * falls on revenue never recognized. Each schedule spreads what it has left over its remaining
 * days from here on. Returns what was taken.
 */
async function releaseFromSchedules(
  ctx: Ctx,
  schedules: ScheduleRow[],
  takes: number[],
  reference: { id: string; type: string; creditNoteId?: string | null },
): Promise<number> {
  const lines: PostingLine[] = [];
  let taken = 0;
  for (const [i, s] of schedules.entries()) {
    const take = Math.min(takes[i] ?? 0, Number(s.amount) - Number(s.recognized));
    if (take <= 0) continue;
    taken += take;
    const newAmount = Number(s.amount) - take;
    await updateSchedule(ctx.tx, ctx.tenantId, s.id, {
      amount: newAmount,
      base_recognized: Number(s.recognized),
      base_day: s.recognized_days,
      status: newAmount === Number(s.recognized) ? 'completed' : 'active',
      updated_at: ctx.now,
    });
    lines.push(
      { account: Account.DEFERRED_REVENUE, debit: take, invoiceId: s.invoice_id, customerId: s.customer_id, creditNoteId: reference.creditNoteId ?? null },
      { account: Account.REVENUE_REVERSALS, credit: take, invoiceId: s.invoice_id, creditNoteId: reference.creditNoteId ?? null, mirror: true },
    );
  }
  if (taken > 0) {
    const first = schedules[0]!;
    await postEntry(ctx, {
      ledgerId: first.ledger_id,
      entityId: first.entity_id,
      kind: 'revenue.adjusted',
      referenceType: reference.type,
      referenceId: reference.id,
      currency: first.currency,
      description: `Unrecognized revenue released (${reference.type})`,
      lines,
    });
  }
  return taken;
}

/** A void: everything the invoice's schedules have not recognized is released. */
async function releaseUnrecognized(ctx: Ctx, schedules: ScheduleRow[], reference: { id: string; type: string }): Promise<number> {
  return releaseFromSchedules(
    ctx,
    schedules,
    schedules.map((s) => Number(s.amount) - Number(s.recognized)),
    reference,
  );
}

/**
 * The unrecognized share of a credit note's revenue part (Ind AS 115.87–89, decision 0150): the
 * note lowers the price of the service periods it credits, so the change is allocated the way the
 * price was — over every day of each period. The days already served (recognized) take their
 * share as a reduction of revenue now (the issue entry's Dr revenue reversals stays there); the
 * days still to come take theirs off deferred revenue. The note's revenue is spread over the
 * invoice's active schedules in proportion to their amounts (at most each schedule's amount;
 * anything above falls on revenue recognized at once, e.g. one-off lines); each schedule's part is
 * split by the **time** still to come — days not yet served ÷ days of the period, rounded half-up
 * and capped at what it has unrecognized. Not by recognized ÷ amount: an earlier note lowered the
 * amount but not what was recognized, so that ratio is no longer the elapsed one, and a second
 * note (a plan change crediting the rest of the period) would leave deferred revenue behind for
 * a plan no longer served. Recognition is brought up to today first (`recognized_days`).
 */
export function unrecognizedShares(schedules: Pick<ScheduleRow, 'amount' | 'recognized' | 'total_days' | 'recognized_days'>[], revenue: number): number[] {
  const amounts = schedules.map((s) => Number(s.amount));
  const whole = amounts.reduce((a, b) => a + b, 0);
  if (whole <= 0 || revenue <= 0) return schedules.map(() => 0);
  const credited = Math.min(revenue, whole);
  let left = credited;
  return schedules.map((s, i) => {
    const part = i === schedules.length - 1 ? left : Math.min(left, mulDivRoundHalfUp(credited, amounts[i]!, whole));
    left -= part;
    const unrecognized = amounts[i]! - Number(s.recognized);
    if (amounts[i]! <= 0 || s.total_days <= 0) return 0;
    return Math.max(0, Math.min(unrecognized, mulDivRoundHalfUp(part, s.total_days - s.recognized_days, s.total_days)));
  });
}

/** Recognizes at once whatever the schedules have left (the service ended early). */
async function recognizeRemainder(ctx: Ctx, schedules: ScheduleRow[]): Promise<void> {
  const byLedger = new Map<string, { rows: ScheduleRow[]; lines: PostingLine[] }>();
  for (const s of schedules) {
    const rest = Number(s.amount) - Number(s.recognized);
    await updateSchedule(ctx.tx, ctx.tenantId, s.id, { recognized: Number(s.amount), recognized_days: s.total_days, status: 'completed', updated_at: ctx.now });
    if (rest <= 0) continue;
    const key = `${s.entity_id}:${s.currency}`;
    const group = byLedger.get(key) ?? { rows: [], lines: [] };
    group.rows.push(s);
    group.lines.push(
      { account: Account.DEFERRED_REVENUE, debit: rest, invoiceId: s.invoice_id, customerId: s.customer_id },
      { account: Account.REVENUE, credit: rest, invoiceId: s.invoice_id, mirror: true },
    );
    byLedger.set(key, group);
  }
  await postEntries(
    ctx,
    [...byLedger.values()].map((g) => ({
      ledgerId: g.rows[0]!.ledger_id,
      entityId: g.rows[0]!.entity_id,
      kind: 'revenue.recognized',
      referenceType: 'revenue_recognition',
      referenceId: newId(),
      currency: g.rows[0]!.currency,
      description: 'Revenue recognized at the end of service',
      lines: g.lines,
    })),
  );
}

/** The revenue part of a credit note, as its issue entry reverses it (credit-notes issueLines). */
function creditNoteRevenue(o: Record<string, unknown>): number {
  const subtotal = Number(o.subtotal ?? 0);
  const tax = Number(o.tax_amount ?? 0);
  return tax > 0 || subtotal > 0 ? subtotal : Number(o.amount ?? 0);
}

async function onRevenueEvent(ctx: Ctx, event: EventPayload): Promise<void> {
  const o = event.data.object;
  switch (event.type) {
    case 'invoice.finalized': {
      const inv = invoiceOf(event);
      if (inv) await deferInvoices(ctx, [inv]);
      return;
    }
    case 'credit_note.issued': {
      if (typeof o.invoice_id !== 'string' || typeof o.id !== 'string') return;
      const due = await activeSchedulesOfInvoice(ctx.tx, ctx.tenantId, o.invoice_id);
      if (due.length === 0) return;
      // The recognized share must be the elapsed one: catch up the days the daily job has not run yet.
      await recognizeSchedules(
        ctx,
        due.map((s) => s.id),
      );
      const schedules = await activeSchedulesOfInvoice(ctx.tx, ctx.tenantId, o.invoice_id);
      if (schedules.length === 0) return;
      await releaseFromSchedules(ctx, schedules, unrecognizedShares(schedules, creditNoteRevenue(o)), { id: o.id, type: 'credit_note', creditNoteId: o.id });
      return;
    }
    case 'invoice.voided': {
      if (typeof o.id !== 'string') return;
      const schedules = await activeSchedulesOfInvoice(ctx.tx, ctx.tenantId, o.id);
      const rest = schedules.reduce((a, s) => a + Number(s.amount) - Number(s.recognized), 0);
      if (rest > 0) await releaseUnrecognized(ctx, schedules, { id: o.id, type: 'invoice' });
      return;
    }
    case 'subscription.canceled': {
      // Canceled now (not at period end): the service is over; what is still deferred is earned.
      if (typeof o.id !== 'string' || o.status !== 'canceled') return;
      const schedules = await activeSchedulesOfSubscription(ctx.tx, ctx.tenantId, o.id);
      if (schedules.length) await recognizeRemainder(ctx, schedules);
      return;
    }
  }
}

/** Registered at start-up: runs inside the transaction that emits each event. */
export const revenueListener: EventListener = Object.assign(onRevenueEvent, {
  batch: async (ctx: Ctx, events: EventPayload[]) => {
    const finalized = events
      .filter((e) => e.type === 'invoice.finalized')
      .map(invoiceOf)
      .filter((i): i is InvoiceEvent => i !== null);
    if (finalized.length) await deferInvoices(ctx, finalized);
    for (const e of events) if (e.type !== 'invoice.finalized') await onRevenueEvent(ctx, e);
  },
});

/** The entity's calendar month (`YYYY-MM`) of an instant, and that month's last millisecond. */
const monthOf = (d: Date, timeZone: string): string => periodOf(d, timeZone);
const endOfMonth = (month: string, timeZone: string): Date => new Date(periodBounds(month, timeZone).to.getTime() - 1);

/**
 * The daily recognition of one tenant's due schedules (locked, re-read): each recognizes the days
 * elapsed since its last run. Days are attributed to the calendar month, in the entity's zone, they start in; a
 * month already over is posted at its last instant, the current month now. One entry per entity ×
 * currency × month, two lines per schedule (tagged with the invoice).
 */
export async function recognizeSchedules(ctx: Ctx, scheduleIds: string[]): Promise<number> {
  const rows = await lockSchedules(ctx.tx, ctx.tenantId, scheduleIds);
  const groups = new Map<string, { ledgerId: number; entityId: string; currency: string; postedAt: Date; month: string; lines: PostingLine[] }>();
  let recognized = 0;
  const updates: Parameters<typeof recordRecognition>[3] = [];
  const zones = new Map<string, string>();
  for (const s of rows) {
    if (!zones.has(s.entity_id)) zones.set(s.entity_id, (await findEntity(ctx.tx, ctx.tenantId, s.entity_id))?.time_zone ?? 'UTC');
    const zone = zones.get(s.entity_id)!;
    const start = s.period_start.getTime();
    const day = elapsedDays(s.period_start, s.total_days, ctx.now);
    if (day <= s.recognized_days) continue;
    let done = Number(s.recognized);
    // Walk the elapsed days month by month.
    let k = s.recognized_days;
    while (k < day) {
      const month = monthOf(new Date(start + k * DAY_MS), zone);
      let last = k + 1;
      while (last < day && monthOf(new Date(start + last * DAY_MS), zone) === month) last += 1;
      const target = cumulativeTarget(s, last);
      const part = target - done;
      done = target;
      k = last;
      if (part <= 0) continue;
      const postedAt = month === monthOf(ctx.now, zone) ? ctx.now : endOfMonth(month, zone);
      const key = `${s.entity_id}:${s.currency}:${month}`;
      const g = groups.get(key) ?? { ledgerId: s.ledger_id, entityId: s.entity_id, currency: s.currency, postedAt, month, lines: [] };
      g.lines.push(
        { account: Account.DEFERRED_REVENUE, debit: part, invoiceId: s.invoice_id, customerId: s.customer_id },
        { account: Account.REVENUE, credit: part, invoiceId: s.invoice_id, mirror: true },
      );
      groups.set(key, g);
    }
    recognized += done - Number(s.recognized);
    updates.push({ id: s.id, recognized: done, recognized_days: day, status: day >= s.total_days ? 'completed' : 'active' });
  }
  await recordRecognition(ctx.tx, ctx.tenantId, ctx.now, updates);
  for (const g of groups.values()) {
    await postEntries({ ...ctx, now: g.postedAt }, [
      {
        ledgerId: g.ledgerId,
        entityId: g.entityId,
        kind: 'revenue.recognized',
        referenceType: 'revenue_recognition',
        referenceId: newId(),
        currency: g.currency,
        description: `Revenue recognized (${g.month})`,
        lines: g.lines,
      },
    ]);
  }
  return recognized;
}

/** The recognition job: every tenant's due schedules, a page per transaction. */
export async function recognizeDueRevenue(db: Kysely<DB>, mode: Mode | null, now: Date): Promise<void> {
  let after: { tenantId: string; id: string } | null = null;
  for (;;) {
    const due = await dueSchedules(db, mode, now, after, 500);
    if (due.length === 0) return;
    const byTenant = new Map<string, string[]>();
    for (const s of due) byTenant.set(s.tenant_id, [...(byTenant.get(s.tenant_id) ?? []), s.id]);
    for (const [tenantId, ids] of byTenant) await db.transaction().execute((tx) => recognizeSchedules({ tx, tenantId, now }, ids));
    if (due.length < 500) return;
    const last = due[due.length - 1]!;
    after = { tenantId: last.tenant_id, id: last.id };
  }
}

export type RevenueReport = {
  currency: string;
  from: string | null;
  to: string | null;
  recognized_total: number;
  deferred_total: number;
  months: { month: string; recognized: number }[];
};

export async function revenueReport(
  ctx: ReadCtx,
  query: { from: Date | null; to: Date | null; currency?: string | undefined },
  timeZone = 'UTC',
): Promise<RevenueReport> {
  const currency = query.currency ?? (await getTenant(ctx)).base_currency;
  const months = await recognizedByMonth(ctx.tx, ctx.tenantId, currency, query.from, query.to, timeZone);
  return {
    currency,
    from: query.from?.toISOString() ?? null,
    to: query.to?.toISOString() ?? null,
    recognized_total: months.reduce((a, m) => a + m.recognized, 0),
    deferred_total: await deferredBalance(ctx.tx, ctx.tenantId, currency),
    months,
  };
}

export { activeSchedulesInClockScope } from './revenue.repository.js';
