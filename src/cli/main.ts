import { Command } from 'commander';
import { pino } from 'pino';
import { createKosh, VERSION } from '../app.js';
import { loadConfig } from '../platform/config.js';
import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrate.js';
import { importCommand } from './import.js';

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
    const config = loadConfig();
    const logger = pino({ level: config.logLevel });
    const kosh = await createKosh({ config, logger });
    const address = await kosh.app.listen({ port: config.port, host: config.host });
    if (config.runWorker) kosh.worker.start();
    const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded database in ${config.dataDir}`;
    const local = address.replace('0.0.0.0', 'localhost');
    console.log(`Kosh ${VERSION} listening on ${local} (${config.mode} mode, ${where})`);
    console.log(`API docs: ${local}/docs  ·  OpenAPI: ${local}/openapi.json`);
    onShutdown(() => kosh.close(), (m) => logger.info(m));
  });

program
  .command('worker')
  .description('Run only the background worker (jobs: webhooks, e-mail, renewals, expiries)')
  .action(async () => {
    const config = loadConfig();
    const logger = pino({ level: config.logLevel });
    const kosh = await createKosh({ config, logger });
    kosh.worker.start();
    console.log(`Kosh worker running (${config.databaseUrl ? 'PostgreSQL' : config.dataDir})`);
    onShutdown(() => kosh.close(), (m) => logger.info(m));
  });

program
  .command('migrate')
  .description('Apply pending database migrations and exit')
  .action(async () => {
    const config = loadConfig();
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      const applied = await migrate(database.pool, (line) => console.log(line));
      console.log(applied.length ? `${applied.length} migration(s) applied` : 'database is up to date');
    } finally {
      await database.close();
    }
  });

program.addCommand(importCommand());

program.parseAsync(process.argv).catch(fail);
