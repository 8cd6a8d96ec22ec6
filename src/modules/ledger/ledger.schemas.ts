import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const journalLineSchema = z
  .object({
    id: z.uuid(),
    account_code: z.int(),
    account_name: z.string(),
    debit: z.int(),
    credit: z.int(),
    functional_debit: z.int().nullable().describe("the line's value in the entity's functional currency (null: a foreign entry booked without a known rate)"),
    functional_credit: z.int().nullable(),
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
    functional_currency: z.string().nullable().describe("the entity's functional currency (INR for an Indian entity)"),
    exchange_rate: z
      .string()
      .nullable()
      .describe('functional currency per one unit of `currency` for the lines valued at the transaction rate; null in the functional currency'),
    description: z.string(),
    posted_at: fields.timestamp(),
    lines: z.array(journalLineSchema),
  })
  .meta({ id: 'JournalEntry' });

export type JournalEntry = z.infer<typeof journalEntrySchema>;
