/**
 * The exactly-once crash test's worker: charges (or, after a restart, resolves) against
 * DATABASE_URL with the test gateway's journal in a file both processes see.
 * Usage: node --import tsx charge.child.ts charge <tenant> <invoice> <iso now> | resolve <iso now>
 */
import { randomBytes } from 'node:crypto';
import { AppScope } from '../../src/platform/app-scope.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { loadConfig } from '../../src/platform/config.js';
import { createSecretBox } from '../../src/platform/secrets/secrets.js';
import { chargeInvoices, resolvePendingAttempts } from '../../src/flows/collections/collect-invoice-payment.js';

const [mode, ...args] = process.argv.slice(2);
const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
const env = {
  db: database.db,
  config: loadConfig({ KOSH_MODE: 'test', KOSH_TEST_GATEWAY_JOURNAL: process.env.KOSH_TEST_GATEWAY_JOURNAL }),
  secrets: createSecretBox(randomBytes(32)),
  // This process's own state (the test gateway's journal is in the file either way).
  scope: new AppScope(),
};
if (mode === 'charge') {
  const [tenantId, invoiceId, at] = args;
  console.log('charging');
  await chargeInvoices(env, tenantId!, [invoiceId!], new Date(at!));
  console.log('charged');
} else {
  const resolved = await resolvePendingAttempts(env, new Date(args[0]!));
  console.log(JSON.stringify({ resolved }));
}
await database.close();
