import type { Insertable, Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { TestClocksTable } from './test-clocks.tables.js';
import './test-clocks.tables.js';

export type TestClockRow = Selectable<TestClocksTable>;

export async function insertTestClock(tx: Tx, row: Insertable<TestClocksTable>): Promise<void> {
  await tx.insertInto('test_clocks').values(row).execute();
}

export async function findTestClock(tx: Tx, tenantId: string, id: string): Promise<TestClockRow | undefined> {
  return tx.selectFrom('test_clocks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function listTestClockRows(tx: Tx, tenantId: string, page: Page): Promise<{ rows: TestClockRow[]; total: number }> {
  const q = tx.selectFrom('test_clocks').where('tenant_id', '=', tenantId);
  return paginate<TestClockRow>(tx, q, { tenantId, table: 'test_clocks', page });
}

export async function deleteTestClockRow(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const result = await tx
    .deleteFrom('test_clocks')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '!=', 'advancing')
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function setTestClockTime(tx: Tx, tenantId: string, id: string, frozenTime: Date, now: Date): Promise<void> {
  await tx.updateTable('test_clocks').set({ frozen_time: frozenTime, updated_at: now }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}
