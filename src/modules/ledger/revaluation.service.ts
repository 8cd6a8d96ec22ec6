import type { Ctx } from '../../platform/context.js';
import { newId } from '../../platform/ids.js';
import { convertMinorUnits } from '../../platform/money.js';
import { entityRateAt, type EntityRow } from '../entities/index.js';
import { firstOpenPeriodFrom, isPeriodOpenAt, nextPeriod, periodBounds, periodOf } from '../periods/index.js';
import { Account } from './accounts.js';
import { postEntries, type Posting, type PostingLine } from './ledger.service.js';
import { insertRevaluation, openForeignReceivables, revaluationsOf, type FxRevaluationRow, type OpenReceivable } from './revaluation.repository.js';

export type RevaluationEntity = Pick<EntityRow, 'id' | 'tb_ledger_id' | 'functional_currency' | 'time_zone' | 'fx_revaluation'>;

/**
 * Whether the entity restates at this month's end (decision 0650): every month (`monthly`), only at
 * the end of the financial year, which ends with March in Kosh (`year_end`), or never (`off`).
 */
export function revaluesAt(entity: Pick<EntityRow, 'fx_revaluation'>, period: string): boolean {
  if (entity.fx_revaluation === 'off') return false;
  return entity.fx_revaluation !== 'year_end' || period.endsWith('-03');
}

/**
 * Month-end revaluation (Ind AS 21.23(a), 21.28; docs/decisions/0450): each open receivable in a
 * foreign currency is restated at the closing rate — the entity's rate in force at the month's last
 * instant — against 4310 unrealized exchange gain/loss. The entry (`fx.revaluation`) carries only
 * functional amounts, on the invoice's receivable line, and is reversed (`fx.revaluation_reversed`)
 * at the first instant of the next open month, so settlement keeps valuing the receivable at its
 * booking rate and the realized difference lands on 4300 as before. A month is revalued once per
 * currency; a currency without a rate in the entity's table is left out. Closing the running month
 * revalues at the close (its later postings go to the next month). An entity whose `fx_revaluation`
 * leaves this month out (decision 0650) is not revalued. Returns the revaluations made now.
 */
export async function revalueMonth(ctx: Ctx, entity: RevaluationEntity, period: string): Promise<FxRevaluationRow[]> {
  if (!revaluesAt(entity, period)) return [];
  const { to } = periodBounds(period, entity.time_zone);
  const revaluedAt = new Date(Math.min(ctx.now.getTime(), to.getTime() - 1));
  const open = await openForeignReceivables(ctx.tx, ctx.tenantId, entity.id, entity.functional_currency, to);
  if (open.length === 0) return [];
  const done = new Set((await revaluationsOf(ctx.tx, ctx.tenantId, entity.id, period)).map((r) => r.currency));
  const byCurrency = new Map<string, OpenReceivable[]>();
  for (const r of open) if (!done.has(r.currency)) byCurrency.set(r.currency, [...(byCurrency.get(r.currency) ?? []), r]);
  if (byCurrency.size === 0) return [];
  const reversedAt = periodBounds(await firstOpenPeriodFrom(ctx, entity.id, nextPeriod(period)), entity.time_zone).from;
  const made: FxRevaluationRow[] = [];
  const postings: Posting[] = [];
  for (const [currency, receivables] of byCurrency) {
    const rate = await entityRateAt(ctx, entity.id, entity.functional_currency, currency, revaluedAt);
    if (rate === null) continue;
    const lines: PostingLine[] = [];
    let total = 0;
    for (const r of receivables) {
      const difference = convertMinorUnits(r.amount, currency, entity.functional_currency, rate) - r.functional;
      if (difference === 0) continue;
      total += difference;
      const side = difference > 0 ? { debit: 0 } : { credit: 0 };
      lines.push({ account: Account.RECEIVABLES, ...side, functional: Math.abs(difference), invoiceId: r.invoice_id, customerId: r.customer_id });
    }
    if (lines.length === 0) continue;
    // A net gain is a credit on 4310, a net loss a debit.
    if (total !== 0) lines.push({ account: Account.UNREALIZED_EXCHANGE, ...(total > 0 ? { credit: 0 } : { debit: 0 }), functional: Math.abs(total) });
    const row: FxRevaluationRow = {
      tenant_id: ctx.tenantId,
      id: newId(),
      entity_id: entity.id,
      period,
      currency,
      rate,
      difference: total,
      invoice_count: lines.filter((l) => l.account === Account.RECEIVABLES).length,
      revalued_at: revaluedAt,
      reversed_at: reversedAt,
      created_at: ctx.now,
    };
    if (!(await insertRevaluation(ctx.tx, row))) continue;
    made.push(row);
    const base = {
      ledgerId: entity.tb_ledger_id,
      entityId: entity.id,
      referenceType: 'fx_revaluation',
      referenceId: row.id,
      currency,
      rate,
      functionalOnly: true,
    };
    postings.push(
      { ...base, kind: 'fx.revaluation', description: `Revaluation of open ${currency} receivables at ${rate} (${period})`, postedAt: revaluedAt, lines },
      {
        ...base,
        kind: 'fx.revaluation_reversed',
        description: `Reversal of the ${period} revaluation of ${currency} receivables`,
        postedAt: reversedAt,
        lines: lines.map(flip),
      },
    );
  }
  await postEntries(ctx, postings);
  return made;
}

function flip(l: PostingLine): PostingLine {
  const { debit, credit, ...rest } = l;
  return debit !== undefined ? { ...rest, credit: debit } : { ...rest, debit: credit };
}

/**
 * The month-end run for one entity: the month before this one (in its zone), unless it is closed
 * (closing revalues it) or the entity did not exist yet.
 */
export async function revalueEndedMonth(ctx: Ctx, entity: RevaluationEntity & Pick<EntityRow, 'created_at'>): Promise<FxRevaluationRow[]> {
  const current = periodOf(ctx.now, entity.time_zone);
  const { from } = periodBounds(current, entity.time_zone);
  const last = new Date(from.getTime() - 1);
  const period = periodOf(last, entity.time_zone);
  if (period < periodOf(entity.created_at, entity.time_zone)) return [];
  if (!(await isPeriodOpenAt(ctx, entity, last)).open) return [];
  return revalueMonth(ctx, entity, period);
}
