import type { Generated } from 'kysely';
import type { Timestamp, TableAccess } from '../../platform/db/schema.js';

export interface JournalEntriesTable {
  tenant_id: string;
  id: string;
  ledger_id: number;
  entity_id: string;
  kind: string;
  reference_type: string;
  reference_id: string;
  currency: string;
  description: string;
  posted_at: Timestamp;
  /** The entity's functional currency (DESIGN §19); null only on entries booked before it was kept. */
  functional_currency: string | null;
  /** Functional currency per one unit of `currency` for the lines valued at the transaction's rate. */
  exchange_rate: string | null;
}

export interface JournalLinesTable {
  tenant_id: string;
  id: string;
  entry_id: string;
  account_code: number;
  debit: number;
  credit: number;
  /** The line's value in the functional currency; null on foreign entries booked before it was kept, or unvalued. */
  functional_debit: number | null;
  functional_credit: number | null;
  customer_id: string | null;
  invoice_id: string | null;
  credit_note_id: string | null;
}

/** A month-end revaluation of an entity's open receivables in one foreign currency (decision 0450). */
export interface FxRevaluationsTable {
  tenant_id: string;
  id: string;
  entity_id: string;
  /** `YYYY-MM` in the entity's zone. */
  period: string;
  currency: string;
  /** The closing rate: functional units per one unit of `currency`. */
  rate: string;
  /** Σ open receivables at the closing rate − their carried functional value (+ gain, − loss). */
  difference: number;
  invoice_count: number;
  revalued_at: Timestamp;
  reversed_at: Timestamp;
  created_at: Timestamp;
}

/** Journal entries committed but not yet written to the secondary ledger. */
export interface TbOutboxTable {
  tenant_id: string;
  entry_id: string;
}

/** A secondary-ledger account in TigerBeetle's shape (docs/decisions/0080-secondary-ledger.md). */
export interface TbAccountsTable {
  tenant_id: string;
  id: string;
  ledger: number;
  code: number;
  flags: Generated<number>;
  debits_posted: Generated<number>;
  credits_posted: Generated<number>;
  user_data_128: Generated<string | null>;
  user_data_64: Generated<number>;
  user_data_32: Generated<number>;
  entity_id: string;
  currency: string;
  timestamp: Timestamp;
}

/** An immutable secondary-ledger transfer; id = the journal line's id, user_data_128 = the entry's. */
export interface TbTransfersTable {
  tenant_id: string;
  id: string;
  debit_account_id: string;
  credit_account_id: string;
  amount: number;
  ledger: number;
  code: number;
  flags: number;
  user_data_128: string;
  user_data_64: number;
  user_data_32: number;
  timestamp: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    journal_entries: JournalEntriesTable;
    journal_lines: JournalLinesTable;
    tb_outbox: TbOutboxTable;
    tb_accounts: TbAccountsTable;
    tb_transfers: TbTransfersTable;
    fx_revaluations: FxRevaluationsTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const ledgerTableAccess: TableAccess = {
  journal_entries: { read: ['finance'] },
  journal_lines: { read: ['finance'] },
  tb_accounts: { read: ['finance'] },
  tb_outbox: { read: ['finance'] },
  tb_transfers: { read: ['finance'] },
};
