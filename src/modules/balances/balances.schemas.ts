import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

/**
 * Where a customer's spendable balance comes from: advances and credit notes (DESIGN §20), paid and
 * promotional credit grants (DESIGN §23). Each is one branch of the view (migrations/0281, 0395).
 */
export const BALANCE_SOURCES = ['advances', 'credit_notes', 'prepaid_credit', 'promotional_credit'] as const;
export type BalanceSource = (typeof BALANCE_SOURCES)[number];

export const customerBalanceSchema = z
  .object({
    object: z.literal('customer_balance'),
    customer_id: z.uuid(),
    balances: z.array(
      z.object({
        currency: z.string(),
        available: z.int().describe('what the customer can spend in this currency: the sum of the sources'),
        sources: z.record(z.string(), z.int()).describe(`per source (${BALANCE_SOURCES.join(', ')}); every source is present, 0 when empty`),
      }),
    ),
  })
  .meta({ id: 'CustomerBalance' });
export type CustomerBalance = z.infer<typeof customerBalanceSchema>;

export const balanceTransactionSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('balance_transaction'),
    customer_id: z.uuid(),
    currency: z.string(),
    source: z.string().describe(BALANCE_SOURCES.join(' | ')),
    source_id: z.uuid().describe('the advance, credit note or credit grant whose balance moved'),
    type: z
      .string()
      .describe(
        'advance_received, advance_applied, advance_refunded, credit_note_issued, credit_note_applied, credit_note_refunded, credit_note_refund_failed, credit_note_expired, credit_note_voided, credit_granted, credit_drawn, credit_expired, credit_voided',
      ),
    amount: z.int().describe('positive adds to the balance, negative takes from it'),
    document: z.object({
      type: z.string().describe('receipt_voucher, refund_voucher, invoice, credit_note, refund, credit_grant'),
      id: z.uuid(),
      number: z.string().nullable(),
    }),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'BalanceTransaction' });
export type BalanceTransaction = z.infer<typeof balanceTransactionSchema>;

export const balanceTransactionsQuery = z.object({
  currency: fields.currency().optional(),
  source: z.enum(BALANCE_SOURCES).optional(),
});
