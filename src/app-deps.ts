import type { Database } from './platform/db/database.js';
import type { HttpDeps } from './platform/http/server.js';
import type { JobHandlers, RecurringJob, Ticker } from './platform/jobs/jobs.js';

/** What every module's routes and jobs are given by the composition root (src/app.ts). */
export type AppDeps = HttpDeps & {
  database: Database;
  /** Every job handler of the worker, set once the composition root has them (a test clock's advance runs them). */
  jobHandlers?: JobHandlers;
};

/**
 * A domain module as the composition root sees it: the job kinds it handles and its start-up hooks
 * (its HTTP routes live in src/api, above it).
 * Nothing else crosses the boundary; other modules call its exported service functions.
 */
export type KoshModule = {
  name: string;
  jobs?: JobHandlers;
  /** Job kinds (handled in `jobs`) the worker enqueues on a schedule. */
  recurring?: RecurringJob[];
  /** Sweeps the worker runs itself every few seconds (see Ticker). */
  tickers?: Ticker[];
  /** Called once at start-up (register event listeners and the like). */
  init?: (deps: AppDeps) => void;
};
