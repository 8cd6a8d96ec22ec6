import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { transition, type Transitions } from '../../platform/db/transition.js';
import type { EntityPeriodsTable, PeriodStatus } from './periods.tables.js';
import type { PeriodRow } from './periods.repository.js';

/**
 *   open ──close / file──> closed ──reopen──> open
 * Filing a return closes the month (and records the filing once per return: the guard).
 */
export const periodTransitions = {
  close: { from: ['open'], to: 'closed' },
  reopen: { from: ['closed'], to: 'open' },
  file: { from: ['open', 'closed'], to: 'closed' },
} as const satisfies Transitions<PeriodStatus>;

export type PeriodEvent = keyof typeof periodTransitions;
export type GstReturnKind = 'gstr1' | 'gstr3b';

export async function transitionPeriod(
  tx: Tx,
  tenantId: string,
  row: PeriodRow,
  event: PeriodEvent,
  patch: Updateable<EntityPeriodsTable>,
  filedReturn?: GstReturnKind,
): Promise<PeriodRow> {
  return transition<PeriodRow>(tx, {
    table: 'entity_periods',
    noun: 'period',
    tenantId,
    id: row.id,
    event,
    transition: periodTransitions[event],
    patch,
    guard: filedReturn ? (q) => q.where(`${filedReturn}_filed_at`, 'is', null) : undefined,
    refuse: (current) =>
      filedReturn && current[`${filedReturn}_filed_at`]
        ? errors.conflict(`${filedReturn.toUpperCase()} of ${row.period} is already marked filed`, 'return_already_filed')
        : errors.conflict(`the period ${row.period} is already ${current.status}`, current.status === 'closed' ? 'period_closed' : 'period_open'),
  });
}
