import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';

class PreviewRollback<T> extends Error {
  constructor(readonly result: T) {
    super('preview: rolled back');
  }
}

/**
 * A preview: the very same action (same code, same numbers and tax) in a transaction that is then
 * rolled back, so nothing is written — no invoice, no number taken, no event, no credit note.
 */
export async function previewInRollback<T>(db: Kysely<DB>, tenantId: string, now: Date, action: (ctx: Ctx) => Promise<T>): Promise<T> {
  try {
    await db.transaction().execute(async (tx) => {
      throw new PreviewRollback(await action({ tx, tenantId, now }));
    });
  } catch (error) {
    if (error instanceof PreviewRollback) return error.result as T;
    throw error;
  }
  throw new Error('unreachable: the preview transaction always rolls back');
}
