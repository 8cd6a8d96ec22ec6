import type { Json, Timestamp } from '../db/schema.js';

export type JobState = 'pending' | 'running' | 'done' | 'dead';

export interface JobsTable {
  id: string;
  tenant_id: string | null;
  /** The tenant's mode (`test`/`live`), set at enqueue; null for platform jobs, which any worker runs. */
  mode: 'test' | 'live' | null;
  kind: string;
  payload: Json<Record<string, unknown>>;
  state: JobState;
  attempts: number;
  max_attempts: number;
  run_at: Timestamp;
  locked_until: Timestamp | null;
  last_error: string | null;
  unique_key: string | null;
  /** Priority class (priorities.ts): 0 money, 1 notices, 2 deliveries, 3 background. */
  priority: number;
  /** A group whose running jobs are capped together (a webhook endpoint), or null. */
  concurrency_key: string | null;
  /** The test clock whose advance runs this job (decision 0440), or null. */
  test_clock_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../db/schema.js' {
  interface Tables {
    jobs: JobsTable;
  }
}
