import type { Selectable, Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { tryTransition, type Transitions } from '../../platform/db/transition.js';
import type { DunningExecutionsTable, ExecutionStatus } from './dunning.tables.js';

/**
 * A dunning execution (DESIGN §12), one per dunned invoice:
 *
 *   active ──step (the next step scheduled) / raise_wall (the payment wall goes up)──> active
 *      │ ────recover (the invoice was paid)──> recovered
 *      │ ────exhaust (the campaign ran out of steps, the invoice still unpaid)──> exhausted
 *      └──── cancel (the invoice voided or credited away, or its campaign deleted)──> canceled
 *   exhausted ──lower_wall (the invoice paid, voided or credited to zero later)──> exhausted
 *
 * recovered and canceled are final; an exhausted execution changes only to lower the wall it left
 * standing. A move out of any other status is refused: the guarded UPDATE finds no row, so an
 * execution a concurrent payment already ended is never ended a second time.
 */
export const executionTransitions = {
  step: { from: ['active'], to: 'active' },
  raise_wall: { from: ['active'], to: 'active' },
  recover: { from: ['active'], to: 'recovered' },
  exhaust: { from: ['active'], to: 'exhausted' },
  cancel: { from: ['active'], to: 'canceled' },
  lower_wall: { from: ['exhausted'], to: 'exhausted' },
} as const satisfies Transitions<ExecutionStatus>;

export type ExecutionEvent = keyof typeof executionTransitions;

/** The event that ends an execution in each final status. */
export const endingEvent = {
  recovered: 'recover',
  exhausted: 'exhaust',
  canceled: 'cancel',
} as const satisfies Record<Exclude<ExecutionStatus, 'active'>, ExecutionEvent>;

/**
 * The guarded transition: `UPDATE dunning_executions SET status = <to>, … WHERE … AND status IN
 * (<from>) RETURNING *`. Undefined: the execution is not (or no longer) in a status the event
 * leaves from, and nothing changed.
 */
export async function transitionExecution(
  tx: Tx,
  tenantId: string,
  id: string,
  event: ExecutionEvent,
  patch: Omit<Updateable<DunningExecutionsTable>, 'status'> = {},
): Promise<Selectable<DunningExecutionsTable> | undefined> {
  return tryTransition<Selectable<DunningExecutionsTable>>(tx, {
    table: 'dunning_executions',
    tenantId,
    id,
    event,
    transition: executionTransitions[event],
    patch,
  });
}
