import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { transition } from '../../platform/db/transition.js';
import type { TestClocksTable, TestClockStatus } from './test-clocks.tables.js';
import type { TestClockRow } from './test-clocks.repository.js';

/**
 *   ready ──start_advance──> advancing ──finish_advance──> ready
 *                               └──fail_advance──> internal_failure ──start_advance──> advancing
 * An advance in progress refuses another (409 test_clock_advancing).
 */
export const testClockTransitions = {
  start_advance: { from: ['ready', 'internal_failure'], to: 'advancing' },
  finish_advance: { from: ['advancing'], to: 'ready' },
  fail_advance: { from: ['advancing'], to: 'internal_failure' },
} as const satisfies Record<string, { from: readonly TestClockStatus[]; to: TestClockStatus }>;

export type TestClockEvent = keyof typeof testClockTransitions;

export async function transitionTestClock(
  tx: Tx,
  tenantId: string,
  id: string,
  event: TestClockEvent,
  patch: Updateable<TestClocksTable> = {},
): Promise<TestClockRow> {
  return transition<TestClockRow>(tx, { table: 'test_clocks', noun: 'test_clock', tenantId, id, event, transition: testClockTransitions[event], patch });
}
