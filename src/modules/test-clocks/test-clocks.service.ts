import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Page } from '../../platform/http/envelope.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { emitEvent } from '../../platform/events/events.js';
import { countCustomersOnTestClocks } from '../customers/index.js';
import { setTestClockTime, deleteTestClockRow, findTestClock, insertTestClock, listTestClockRows, type TestClockRow } from './test-clocks.repository.js';
import { transitionTestClock } from './test-clocks.states.js';
import type { CreateTestClockBody, TestClock } from './test-clocks.schemas.js';

/** How far one advance may go: two years of a clock's customers' billing. */
export const MAX_ADVANCE_MS = 2 * 366 * 86_400_000;

export function toTestClock(row: TestClockRow, customerCount: number): TestClock {
  return {
    id: row.id,
    object: 'test_clock',
    name: row.name,
    frozen_time: toIso(row.frozen_time),
    status: row.status,
    advancing_to: toIsoOrNull(row.advancing_to),
    customer_count: customerCount,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

async function withCount(ctx: ReadCtx, row: TestClockRow): Promise<TestClock> {
  const counts = await countCustomersOnTestClocks(ctx.tx, ctx.tenantId, [row.id]);
  return toTestClock(row, counts.get(row.id) ?? 0);
}

export async function createTestClock(ctx: Ctx, input: CreateTestClockBody): Promise<TestClock> {
  const row: TestClockRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    name: input.name ?? null,
    frozen_time: new Date(input.frozen_time),
    status: 'ready',
    advancing_to: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertTestClock(ctx.tx, row);
  const clock = toTestClock(row, 0);
  await emitEvent(ctx, 'test_clock.created', clock);
  return clock;
}

export async function getTestClock(ctx: ReadCtx, id: string): Promise<TestClock> {
  const row = await findTestClock(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('test clock');
  return withCount(ctx, row);
}

export async function listTestClocks(ctx: ReadCtx, page: Page): Promise<{ clocks: TestClock[]; total: number }> {
  const { rows, total } = await listTestClockRows(ctx.tx, ctx.tenantId, page);
  const counts = await countCustomersOnTestClocks(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  return { clocks: rows.map((r) => toTestClock(r, counts.get(r.id) ?? 0)), total };
}

/**
 * Deletes a clock that is not advancing. Its customers stay on it, frozen: no clock advances them
 * any more and the real worker never bills them (decision 0440).
 */
export async function deleteTestClock(ctx: Ctx, id: string): Promise<{ id: string; object: 'test_clock'; deleted: true }> {
  const row = await findTestClock(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('test clock');
  if (!(await deleteTestClockRow(ctx.tx, ctx.tenantId, id)))
    throw errors.conflict('the test clock is advancing; delete it once the advance is over', 'test_clock_advancing');
  await emitEvent(ctx, 'test_clock.deleted', await withCount(ctx, row));
  return { id, object: 'test_clock', deleted: true };
}

/**
 * Starts an advance: ready (or internal_failure) → advancing, with where it goes. The advance then
 * runs in its own transactions (flows/test-clocks/advance-test-clock.ts); a second advance while
 * one runs is refused with 409 test_clock_advancing.
 */
export async function startTestClockAdvance(ctx: Ctx, id: string, to: Date): Promise<TestClockRow> {
  const row = await findTestClock(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('test clock');
  if (row.status !== 'advancing') {
    if (to.getTime() <= row.frozen_time.getTime()) throw errors.invalidField('to', `must be later than the clock's frozen_time (${toIso(row.frozen_time)})`);
    if (to.getTime() - row.frozen_time.getTime() > MAX_ADVANCE_MS) throw errors.invalidField('to', "must be at most two years after the clock's frozen_time");
  }
  const moved = await transitionTestClock(ctx.tx, ctx.tenantId, id, 'start_advance', { advancing_to: to, updated_at: ctx.now });
  await emitEvent(ctx, 'test_clock.advancing', await withCount(ctx, moved));
  return moved;
}

/** The clock has reached `frozen_time`: it moves there (each step of an advance records its progress too). */
export async function recordTestClockTime(ctx: Ctx, id: string, frozenTime: Date): Promise<void> {
  await setTestClockTime(ctx.tx, ctx.tenantId, id, frozenTime, ctx.now);
}

export async function finishTestClockAdvance(ctx: Ctx, id: string, frozenTime: Date): Promise<TestClock> {
  const row = await transitionTestClock(ctx.tx, ctx.tenantId, id, 'finish_advance', { frozen_time: frozenTime, advancing_to: null, updated_at: ctx.now });
  const clock = await withCount(ctx, row);
  await emitEvent(ctx, 'test_clock.ready', clock);
  return clock;
}

export async function failTestClockAdvance(ctx: Ctx, id: string): Promise<TestClock> {
  const row = await transitionTestClock(ctx.tx, ctx.tenantId, id, 'fail_advance', { advancing_to: null, updated_at: ctx.now });
  const clock = await withCount(ctx, row);
  await emitEvent(ctx, 'test_clock.internal_failure', clock);
  return clock;
}

/** A clock's frozen_time, or null when the tenant has no such clock (any more). */
export async function testClockTime(ctx: Ctx, id: string): Promise<Date | null> {
  return (await findTestClock(ctx.tx, ctx.tenantId, id))?.frozen_time ?? null;
}
