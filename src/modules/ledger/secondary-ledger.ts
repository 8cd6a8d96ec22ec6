import { createHash } from 'node:crypto';

/**
 * The secondary ledger in TigerBeetle's data model (docs/decisions/0080-secondary-ledger.md).
 * This file is the pure mapping from journal lines to accounts and transfers, and the writer
 * interface a real TigerBeetle client can implement in place of the PostgreSQL one.
 */

/** TigerBeetle transfer flag: this transfer succeeds or fails together with the next one. */
export const TRANSFER_FLAG_LINKED = 1;

/**
 * The control account every journal line is posted against: a debit line moves money from the
 * control account to the line's account, a credit line the other way. Over an entry (balanced)
 * the control account nets to zero, so its balance is 0 when every entry is complete.
 */
export const CONTROL_ACCOUNT_CODE = 9999;

/** Entity ledgers (tb_ledger_id) the 32-bit `ledger` field can carry with 15 bits of currency. */
export const MAX_ENTITY_LEDGER = 131_071;

/**
 * TigerBeetle's `ledger` (u32) for one entity × currency: tb_ledger_id in the high 17 bits, the
 * currency's three letters as a base-26 number (0..17575) in the low 15. Transfers only move
 * between accounts of one ledger, so two currencies can never be summed.
 */
export function ledgerNumber(tbLedgerId: number, currency: string): number {
  if (!Number.isInteger(tbLedgerId) || tbLedgerId < 1 || tbLedgerId > MAX_ENTITY_LEDGER) throw new RangeError(`tb_ledger_id ${tbLedgerId} out of range`);
  const c = currency.toUpperCase();
  if (!/^[A-Z]{3}$/.test(c)) throw new RangeError(`currency ${currency} is not three letters`);
  const index = (c.charCodeAt(0) - 65) * 676 + (c.charCodeAt(1) - 65) * 26 + (c.charCodeAt(2) - 65);
  return tbLedgerId * 32_768 + index;
}

/** The inverse of ledgerNumber. */
export function ledgerParts(ledger: number): { tbLedgerId: number; currency: string } {
  const tbLedgerId = Math.floor(ledger / 32_768);
  let index = ledger % 32_768;
  const letters = [Math.floor(index / 676), Math.floor((index %= 676) / 26), index % 26];
  return { tbLedgerId, currency: String.fromCharCode(...letters.map((n) => n + 65)) };
}

function toUuid(bytes: Buffer): string {
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

const tenantPrefixes = new Map<string, Buffer>();

/**
 * Account id (u128, big-endian): bits 127..64 the first 8 bytes of SHA-256(tenant id), 63..32 the
 * ledger, 31..16 the code, 15..0 zero. Deterministic, so the feed never needs to look an id up.
 */
export function accountId(tenantId: string, ledger: number, code: number): string {
  let prefix = tenantPrefixes.get(tenantId);
  if (!prefix) {
    prefix = createHash('sha256').update(tenantId).digest().subarray(0, 8);
    if (tenantPrefixes.size > 10_000) tenantPrefixes.clear();
    tenantPrefixes.set(tenantId, prefix);
  }
  const bytes = Buffer.alloc(16);
  prefix.copy(bytes, 0);
  bytes.writeUInt32BE(ledger, 8);
  bytes.writeUInt16BE(code, 12);
  return toUuid(bytes);
}

/** The transfer `code` (u16) of each kind of business event; 65535 for a kind not listed. */
export const TRANSFER_CODES: Record<string, number> = {
  'invoice.finalized': 1,
  'invoice.voided': 2,
  'payment.recorded': 3,
  'credit_note.issued': 4,
  'credit_note.applied': 5,
  'credit_note.voided': 6,
  'credit_note.expired': 7,
  'revenue.deferred': 10,
  'revenue.recognized': 11,
  'revenue.adjusted': 12,
};
export const OTHER_TRANSFER_CODE = 65_535;

export function transferCode(kind: string): number {
  return TRANSFER_CODES[kind] ?? OTHER_TRANSFER_CODE;
}

export type SecondaryAccount = {
  id: string;
  ledger: number;
  code: number;
  entity_id: string;
  currency: string;
  user_data_32: number;
};

export type SecondaryTransfer = {
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
};

/** As TigerBeetle answers create_transfers: created, the same transfer again, or a clash. */
export type CreateTransferResult = 'ok' | 'exists' | 'exists_with_different_fields';

/**
 * What the feed writes through. The PostgreSQL implementation (secondary-ledger.repository.ts)
 * keeps the tables in Kosh's database; a TigerBeetle client implementing this replaces it.
 * Accounts must be created before transfers that touch them; creating an existing one is a no-op.
 */
export interface SecondaryLedgerWriter {
  createAccounts(tenantId: string, accounts: SecondaryAccount[]): Promise<void>;
  createTransfers(tenantId: string, transfers: SecondaryTransfer[]): Promise<CreateTransferResult[]>;
}

export type FeedEntry = { id: string; ledger_id: number; entity_id: string; kind: string; currency: string; posted_at: Date };
export type FeedLine = { id: string; entry_id: string; account_code: number; debit: number; credit: number };

/**
 * One transfer per journal line (lines of an entry in id order): a debit line debits its account
 * and credits the control account, a credit line the reverse. Every transfer but an entry's last
 * carries `linked`, so the entry's transfers commit as one (as TigerBeetle chains them).
 */
export function transfersOf(tenantId: string, entries: FeedEntry[], lines: FeedLine[]): { accounts: SecondaryAccount[]; transfers: SecondaryTransfer[] } {
  const byEntry = new Map<string, FeedLine[]>();
  for (const l of lines) {
    const list = byEntry.get(l.entry_id);
    if (list) list.push(l);
    else byEntry.set(l.entry_id, [l]);
  }
  const accounts = new Map<string, SecondaryAccount>();
  const account = (entry: FeedEntry, ledger: number, code: number) => {
    const id = accountId(tenantId, ledger, code);
    if (!accounts.has(id)) accounts.set(id, { id, ledger, code, entity_id: entry.entity_id, currency: entry.currency, user_data_32: entry.ledger_id });
    return id;
  };
  const transfers: SecondaryTransfer[] = [];
  for (const entry of entries) {
    const entryLines = (byEntry.get(entry.id) ?? []).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const ledger = ledgerNumber(entry.ledger_id, entry.currency);
    const control = account(entry, ledger, CONTROL_ACCOUNT_CODE);
    entryLines.forEach((l, i) => {
      const own = account(entry, ledger, l.account_code);
      const isDebit = l.debit > 0;
      transfers.push({
        id: l.id,
        debit_account_id: isDebit ? own : control,
        credit_account_id: isDebit ? control : own,
        amount: isDebit ? l.debit : l.credit,
        ledger,
        code: transferCode(entry.kind),
        flags: i < entryLines.length - 1 ? TRANSFER_FLAG_LINKED : 0,
        user_data_128: entry.id,
        user_data_64: entry.posted_at.getTime(),
        user_data_32: l.account_code,
      });
    });
  }
  return { accounts: [...accounts.values()], transfers };
}
