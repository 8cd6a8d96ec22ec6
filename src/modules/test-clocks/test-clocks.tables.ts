import type { TableAccess, Timestamp } from '../../platform/db/schema.js';

export type TestClockStatus = 'ready' | 'advancing' | 'internal_failure';

export interface TestClocksTable {
  tenant_id: string;
  id: string;
  name: string | null;
  /** The clock's "now": what its customers' billing has been run up to. */
  frozen_time: Timestamp;
  status: TestClockStatus;
  /** Where the advance in progress is going; null when none is. */
  advancing_to: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    test_clocks: TestClocksTable;
  }
}

/** Customer creation checks that the clock it names exists (the customers module reads it). */
export const testClocksTableAccess: TableAccess = {
  test_clocks: { read: ['customers'] },
};
