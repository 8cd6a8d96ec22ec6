import { sql, type Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { JobHandler } from '../../platform/jobs/jobs.js';

/**
 * Monthly partitions of `usage_events` (decision 0322): the worker makes this month's and the next
 * two months' partitions ahead of time, moves any events that reached the DEFAULT partition into
 * their month when it is made, and — with KOSH_USAGE_RETENTION_MONTHS — drops whole months older
 * than the retention, with their deduplication keys.
 */
export const MAINTAIN_PARTITIONS_JOB = 'usage.maintain_partitions';
export const MONTHS_AHEAD = 2;
const KEY_DELETE_BATCH = 10_000;

/** A UTC month as (year, month 0–11). */
type Month = { year: number; month: number };

function monthOf(at: Date): Month {
  return { year: at.getUTCFullYear(), month: at.getUTCMonth() };
}
function addMonths(m: Month, n: number): Month {
  const total = m.year * 12 + m.month + n;
  return { year: Math.floor(total / 12), month: total % 12 };
}
function startOf(m: Month): Date {
  return new Date(Date.UTC(m.year, m.month, 1));
}
export function partitionName(m: Month): string {
  return `usage_events_p${m.year}${String(m.month + 1).padStart(2, '0')}`;
}
function parseName(name: string): Month | null {
  const match = /^usage_events_p(\d{4})(\d{2})$/.exec(name);
  return match ? { year: Number(match[1]), month: Number(match[2]) - 1 } : null;
}

async function partitions(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = 'usage_events' AND p.relnamespace = current_schema()::regnamespace`.execute(db);
  return rows.map((r) => r.name);
}

export type PartitionMaintenance = { created: string[]; dropped: string[]; keysDeleted: number };

export async function maintainUsagePartitions(db: Kysely<DB>, now: Date, retentionMonths: number | undefined): Promise<PartitionMaintenance> {
  const existing = new Set(await partitions(db));
  const created: string[] = [];
  const current = monthOf(now);
  for (let n = 0; n <= MONTHS_AHEAD; n++) {
    const month = addMonths(current, n);
    const name = partitionName(month);
    if (existing.has(name)) continue;
    const [from, to] = [startOf(month), startOf(addMonths(month, 1))];
    await db.transaction().execute(async (tx) => {
      // Two workers (a test and a live deployment on one database) may race: one makes it.
      await sql`SELECT pg_advisory_xact_lock(hashtext('kosh.usage_partitions'))`.execute(tx);
      const again = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM pg_class WHERE relname = ${name} AND relnamespace = current_schema()::regnamespace`.execute(tx);
      if (again.rows[0]!.n > 0) return;
      // Events of this month that arrived before it existed sit in DEFAULT: a partition cannot be
      // made over rows the default holds, so they move with it.
      await sql`CREATE TEMP TABLE usage_events_moving ON COMMIT DROP AS
        WITH moved AS (DELETE FROM usage_events_default WHERE ts >= ${from} AND ts < ${to} RETURNING *) SELECT * FROM moved`.execute(tx);
      await sql`CREATE TABLE ${sql.id(name)} PARTITION OF usage_events FOR VALUES FROM (${sql.lit(from.toISOString())}) TO (${sql.lit(to.toISOString())})`.execute(
        tx,
      );
      await sql`INSERT INTO usage_events SELECT * FROM usage_events_moving`.execute(tx);
    });
    created.push(name);
  }

  const dropped: string[] = [];
  let keysDeleted = 0;
  if (retentionMonths !== undefined) {
    const cutoff = startOf(addMonths(current, -retentionMonths));
    for (const name of await partitions(db)) {
      const month = parseName(name);
      if (!month || startOf(addMonths(month, 1)) > cutoff) continue;
      await sql`DROP TABLE ${sql.id(name)}`.execute(db);
      dropped.push(name);
    }
    await sql`DELETE FROM usage_events_default WHERE ts < ${cutoff}`.execute(db);
    for (;;) {
      const result =
        await sql`DELETE FROM usage_event_keys WHERE ctid = ANY (ARRAY(SELECT ctid FROM usage_event_keys WHERE ts < ${cutoff} LIMIT ${KEY_DELETE_BATCH}))`.execute(
          db,
        );
      const deleted = Number(result.numAffectedRows ?? 0);
      keysDeleted += deleted;
      if (deleted < KEY_DELETE_BATCH) break;
    }
  }
  return { created, dropped, keysDeleted };
}

export const maintainPartitionsJob: JobHandler = async (_job, env) => {
  const result = await maintainUsagePartitions(env.db, env.clock.now(), env.config.usageRetentionMonths);
  if (result.created.length || result.dropped.length) env.logger.info(result, 'usage event partitions maintained');
};
