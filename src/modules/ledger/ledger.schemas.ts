import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const journalLineSchema = z
  .object({
    id: z.uuid(),
    account_code: z.int(),
    account_name: z.string(),
    debit: z.int(),
    credit: z.int(),
    customer_id: z.uuid().nullable(),
    invoice_id: z.uuid().nullable(),
    credit_note_id: z.uuid().nullable(),
  })
  .meta({ id: 'JournalLine' });

export const journalEntrySchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    ledger_id: z.int(),
    entity_id: z.uuid(),
    kind: z.string(),
    reference_type: z.string(),
    reference_id: z.uuid(),
    currency: z.string(),
    description: z.string(),
    posted_at: fields.timestamp(),
    lines: z.array(journalLineSchema),
  })
  .meta({ id: 'JournalEntry' });

export type JournalEntry = z.infer<typeof journalEntrySchema>;
