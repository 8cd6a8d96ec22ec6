/**
 * The crash test's victim: runs the billing run against DATABASE_URL at the instant given, and is
 * killed with SIGKILL part way. Usage: node --import tsx billing-run.child.ts <iso instant> <batch>
 */
import { openDatabase } from '../../src/platform/db/database.js';
import { runBillingRun } from '../../src/flows/subscriptions/run-billing.js';

const [at, batch] = process.argv.slice(2);
const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
const report = await runBillingRun(database.db, new Date(at!), { batchSize: Number(batch ?? 50) });
console.log(JSON.stringify(report));
await database.close();
