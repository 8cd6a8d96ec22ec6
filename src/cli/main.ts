import { readFileSync } from 'node:fs';
import { Command } from 'commander';

// Heavy imports (the app, the database drivers, every module) load inside the command that needs
// them, so `kosh --help` and `kosh --version` answer at once.
const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function fail(error: unknown): never {
  console.error(`kosh: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

/** SIGINT/SIGTERM: stop taking requests, finish the ones in flight and the jobs in hand, close storage. */
function onShutdown(close: () => Promise<void>, log: (msg: string) => void): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    log(`${signal} received, shutting down gracefully`);
    close()
      .then(() => process.exit(0))
      .catch((error) => {
        console.error(error);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}

const program = new Command();
program.name('kosh').description('Kosh subscription billing engine').version(VERSION);

program
  .command('serve')
  .description('Serve the API (and, unless KOSH_WORKER=off, run the background worker)')
  .action(async () => {
    const [{ pino }, { createKosh }, { loadConfig }] = await Promise.all([import('pino'), import('../app.js'), import('../platform/config.js')]);
    const config = loadConfig();
    const logger = pino({ level: config.logLevel });
    const kosh = await createKosh({ config, logger });
    const address = await kosh.app.listen({ port: config.port, host: config.host });
    if (config.runWorker) await kosh.startWorker();
    const local = address.replace('0.0.0.0', 'localhost');
    logger.info(
      {
        version: VERSION,
        address: local,
        mode: config.mode,
        database: config.databaseUrl ? 'postgresql' : 'embedded',
        ...(config.databaseUrl ? {} : { data_dir: config.dataDir }),
        dashboard: `${local}/dashboard`,
        docs: `${local}/docs`,
        openapi: `${local}/openapi.json`,
        worker: config.runWorker,
      },
      `Kosh ${VERSION} listening on ${local} (dashboard: ${local}/dashboard)`,
    );
    onShutdown(
      () => kosh.close(),
      (m) => logger.info(m),
    );
  });

program
  .command('worker')
  .description('Run only the background worker (jobs: webhooks, e-mail, renewals, expiries)')
  .action(async () => {
    const [{ pino }, { createKosh }, { loadConfig }] = await Promise.all([import('pino'), import('../app.js'), import('../platform/config.js')]);
    const config = loadConfig();
    const logger = pino({ level: config.logLevel });
    const kosh = await createKosh({ config, logger });
    await kosh.startWorker();
    logger.info({ version: VERSION, database: config.databaseUrl ? 'postgresql' : 'embedded' }, `Kosh ${VERSION} worker running`);
    onShutdown(
      () => kosh.close(),
      (m) => logger.info(m),
    );
  });

program
  .command('migrate')
  .description('Apply pending database migrations and exit (with --status: list them, apply nothing)')
  .option('--status', 'list every migration as applied, pending or unknown to this build; exit 1 when any is pending')
  .action(async (options: { status?: boolean }) => {
    const [{ loadConfig }, { openDatabase }, { migrateWhenReachable, migrationStatus }] = await Promise.all([
      import('../platform/config.js'),
      import('../platform/db/database.js'),
      import('../platform/db/migrate.js'),
    ]);
    const config = loadConfig();
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1, timeouts: config.dbTimeouts });
    try {
      if (options.status) {
        const status = await migrationStatus(database.pool);
        for (const m of status) console.log(`${m.state.padEnd(8)} ${m.version}_${m.name}${m.applied_at ? `  ${m.applied_at.toISOString()}` : ''}`);
        const pending = status.filter((m) => m.state === 'pending').length;
        console.log(pending ? `${pending} migration(s) pending` : 'database is up to date');
        process.exitCode = pending ? 1 : 0;
        return;
      }
      const applied = await migrateWhenReachable(database.pool, (line) => console.log(line), config.dbStartupWaitMs);
      console.log(applied.length ? `${applied.length} migration(s) applied` : 'database is up to date');
    } finally {
      await database.close();
    }
  });

program
  .command('backup')
  .description('Back up the embedded database to a file (consistent while kosh serve runs); for PostgreSQL use pg_dump (docs/operations.md)')
  .requiredOption('--out <file>', 'where to write the backup (a gzipped tar of the data directory)')
  .action(async (options: { out: string }) => {
    const [{ loadConfig }, { backupEmbedded }] = await Promise.all([import('../platform/config.js'), import('../platform/db/backup.js')]);
    const config = loadConfig();
    if (config.databaseUrl) fail('DATABASE_URL is set: back up PostgreSQL with pg_dump or pg_basebackup (docs/operations.md, "Backups")');
    const { bytes, via } = await backupEmbedded(config.dataDir, options.out);
    console.log(`backed up ${config.dataDir} to ${options.out} (${bytes} bytes${via === 'server' ? ', taken by the running server' : ''})`);
  });

program
  .command('restore <file>')
  .description('Replace the embedded database with a backup made by kosh backup (stop the server first; the current data is kept beside it)')
  .action(async (file: string) => {
    const [{ loadConfig }, { restoreEmbedded }] = await Promise.all([import('../platform/config.js'), import('../platform/db/backup.js')]);
    const config = loadConfig();
    if (config.databaseUrl) fail('DATABASE_URL is set: restore PostgreSQL with pg_restore (docs/operations.md, "Backups")');
    const { keptAs } = await restoreEmbedded(config.dataDir, file);
    console.log(`restored ${config.dataDir} from ${file}${keptAs ? `; the previous database is kept in ${keptAs}` : ''}`);
  });

program
  .command('openapi')
  .description('Print the OpenAPI document (the one GET /openapi.json serves) and exit')
  .action(async () => {
    const [{ pino }, { createKosh }, { loadConfig }] = await Promise.all([import('pino'), import('../app.js'), import('../platform/config.js')]);
    const config = loadConfig({ ...process.env, KOSH_DATA_DIR: 'memory://', DATABASE_URL: '', KOSH_WORKER: 'off', LOG_LEVEL: 'silent' });
    const kosh = await createKosh({ config, logger: pino({ level: 'silent' }) });
    try {
      process.stdout.write(`${JSON.stringify(kosh.app.swagger(), null, 2)}\n`);
    } finally {
      await kosh.close();
    }
  });

// `kosh import` (and its database and module imports) loads only when it is the command given;
// otherwise a stand-in keeps it in `kosh --help`.
if (process.argv[2] === 'import') {
  const { importCommand } = await import('./import.js');
  program.addCommand(importCommand());
} else {
  program.command('import').description('Import plans, customers and subscriptions from another system (see `kosh import --help`)');
}

program.parseAsync(process.argv).catch(fail);
