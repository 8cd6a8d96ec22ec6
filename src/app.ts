import { readFileSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { AppDeps } from './app-deps.js';
import { AppScope } from './platform/app-scope.js';
import { systemClock, type Clock } from './platform/clock.js';
import { loadConfig, type Config } from './platform/config.js';
import { openDatabase, type Database } from './platform/db/database.js';
import { ChangeFeed } from './platform/db/change-feed.js';
import { migrateWhenReachable } from './platform/db/migrate.js';
import { createHttpServer, type HttpOptions, type KoshApp } from './platform/http/server.js';
import { purgeFinishedJobs, Worker, type JobHandlers, type RecurringJob, type Ticker } from './platform/jobs/jobs.js';
import { purgeExpiredIdempotencyKeys } from './platform/idempotency/idempotency.js';
import { createMailOutbox, isMailConfigured } from './platform/mail/index.js';
import { modules as domainModules } from './modules/registry.js';
import { flowModules } from './flows/flows.module.js';
import { registerApiRoutes } from './api/routes.js';
import { minimumRole } from './api/access.js';
import { EVENT_TYPES } from './modules/events/index.js';
import { tenantsServedBy } from './modules/tenants/index.js';
import { createSecretBox, resolveSecretKey } from './platform/secrets/secrets.js';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export type Kosh = {
  app: KoshApp;
  worker: Worker;
  deps: AppDeps;
  /** Starts the worker, saying what it runs (mode, concurrency, lease, job kinds) and warning when its mode has no tenants. */
  startWorker(): Promise<void>;
  /** Stops the HTTP server (finishing in-flight requests), the worker, then the database. */
  close(): Promise<void>;
};

export type KoshOptions = {
  config?: Config;
  clock?: Clock;
  logger?: Logger;
  /** An already-open database (tests share one across apps); opened from config otherwise. */
  database?: Database;
  /** Check every response against its schema, refusing unlisted fields (the test harness does). */
  validateResponses?: boolean;
  /** Called for every answer whose status the route's OpenAPI operation does not list (the test harness fails on it). */
  onUndocumentedStatus?: HttpOptions['onUndocumentedStatus'];
};

/** Platform maintenance that runs on the same queue as everything else. */
const platformJobs: JobHandlers = {
  'platform.purge_idempotency_keys': async (_job, env) => {
    await purgeExpiredIdempotencyKeys(env.db, env.clock.now());
  },
  'platform.purge_finished_jobs': async (_job, env) => {
    await purgeFinishedJobs(env.db, env.clock.now());
  },
};

/**
 * Test mode is not a sandbox for recipients: invoices, reminders and receipts go to whatever
 * address a customer carries. With open registration anyone on the network can make a tenant and
 * have this server mail (or text) any address; say so at start-up, loudly (README says it too).
 */
function warnOpenTestDeployment(config: Config, logger: Logger): void {
  if (config.mode !== 'test' || config.registration !== 'open') return;
  logger.warn(
    { mode: config.mode, registration: config.registration, smtp_configured: isMailConfigured(config) },
    'KOSH_MODE=test with KOSH_REGISTRATION=open: anyone who can reach this server can register a tenant and make it send e-mail (and SMS) to any address. ' +
      'Set KOSH_REGISTRATION=admin with KOSH_ADMIN_TOKEN unless this server is private.',
  );
}

/** The composition root: opens storage, applies migrations, wires every module's routes and jobs. */
export async function createKosh(options: KoshOptions = {}): Promise<Kosh> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? pino({ level: config.logLevel });
  const clock = options.clock ?? systemClock;
  const database =
    options.database ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      readUrl: config.readDatabaseUrl,
      dataDir: config.dataDir,
      poolSize: config.dbPoolSize,
      timeouts: config.dbTimeouts,
    }));
  try {
    await migrateWhenReachable(database.pool, (line) => logger.info(line), config.dbStartupWaitMs);
  } catch (error) {
    if (!options.database) await database.close();
    throw error;
  }

  warnOpenTestDeployment(config, logger);
  const secrets = createSecretBox(resolveSecretKey(config));
  // Other processes' changes reach this one's caches (API keys, entitlements) through it.
  const changes = new ChangeFeed(database.notifications, logger);
  await changes.start();
  const scope = new AppScope();
  const deps: AppDeps = { db: database.db, readDb: database.readDb, database, clock, config, logger, version: VERSION, secrets, changes, scope };
  const modules = [...domainModules, ...flowModules];
  for (const m of modules) m.init?.(deps);

  const app = await createHttpServer(
    deps,
    (http) => {
      registerApiRoutes(http, deps);
    },
    {
      eventTypes: EVENT_TYPES,
      validateResponses: options.validateResponses ?? false,
      access: minimumRole,
      ...(options.onUndocumentedStatus ? { onUndocumentedStatus: options.onUndocumentedStatus } : {}),
    },
  );
  await app.ready();

  const mail = createMailOutbox();
  const handlers: JobHandlers = { ...platformJobs, ...mail.handlers };
  const recurring: RecurringJob[] = [
    { kind: 'platform.purge_idempotency_keys', everyMs: 3_600_000 },
    { kind: 'platform.purge_finished_jobs', everyMs: 3_600_000 },
  ];
  const tickers: Ticker[] = [];
  for (const m of modules) {
    Object.assign(handlers, m.jobs ?? {});
    recurring.push(...(m.recurring ?? []));
    tickers.push(...(m.tickers ?? []));
  }
  deps.jobHandlers = handlers;
  const worker = new Worker({
    env: { db: database.db, clock, config, logger, secrets, scope },
    handlers,
    recurring,
    tickers,
    pollMs: config.workerPollMs,
    concurrency: config.workerConcurrency,
    tenantConcurrency: config.workerTenantConcurrency,
    groupConcurrency: config.workerEndpointConcurrency,
  });

  return {
    app,
    worker,
    deps,
    async startWorker() {
      const served = await tenantsServedBy(database.db, config.mode);
      worker.start();
      logger.info({ ...worker.describe(), tenants: served }, `worker started in ${config.mode} mode`);
      if (served === 0) {
        logger.warn(
          { mode: config.mode },
          `no tenant is in ${config.mode} mode: this worker runs only platform jobs until one registers (is KOSH_MODE the mode the tenants were created in?)`,
        );
      }
    },
    async close() {
      await app.close();
      await worker.stop();
      await changes.close();
      mail.close();
      if (!options.database) await database.close();
    },
  };
}
