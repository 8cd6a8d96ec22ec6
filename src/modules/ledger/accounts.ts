/**
 * The chart of accounts (docs/ledger.md explains each account and every posting). Codes are
 * integers so they map onto TigerBeetle's `code` field in the secondary ledger.
 * Normal balance: assets and contra-revenue are debit-normal; liabilities and revenue credit-normal.
 */
export const Account = {
  /** Cash and bank: money actually received. */
  CASH: 1000,
  /** Gateway clearing: card/UPI money the gateway has captured but not yet paid out to the bank. */
  GATEWAY_CLEARING: 1050,
  /** What customers owe on finalized invoices; tagged per invoice. */
  RECEIVABLES: 1100,
  /** Tax the customer deducted at source (TDS) and will certify to us; settles the invoice. */
  TDS_RECEIVABLE: 1200,
  /**
   * GST paid on customer advances not yet adjusted against an invoice or refunded (receipt
   * vouchers, CGST Rules rule 50): an asset until the invoice's own tax takes its place.
   */
  ADVANCE_TAX: 1300,
  /** Output tax payable to the government. */
  CGST_PAYABLE: 2100,
  /** SGST, or UTGST for supplies within a union territory without legislature. */
  SGST_PAYABLE: 2110,
  IGST_PAYABLE: 2120,
  /** Spendable customer credit from credit notes (a liability until applied, voided or expired). */
  CUSTOMER_CREDIT: 2300,
  /** Payments received without an invoice: customer advances. */
  CUSTOMER_ADVANCES: 2310,
  /** Refunds owed to customers who paid offline, until someone pays them out by hand. */
  REFUNDS_PAYABLE: 2320,
  /** Prepaid credit sold (paid credit grants, DESIGN §23): the taxable value of top-ups not yet drawn down, expired or voided. */
  PREPAID_CREDIT: 2330,
  /** Invoiced revenue of service periods not yet delivered (Ind AS 115 / ASC 606 contract liability). */
  DEFERRED_REVENUE: 2400,
  REVENUE: 4000,
  /** Written-off expired credit: the liability released to income. */
  EXPIRED_CREDIT_INCOME: 4100,
  /** Realized exchange gain (credit) or loss (debit): foreign balances settled at another rate (Ind AS 21.28). */
  EXCHANGE_GAIN_LOSS: 4300,
  /** Unrealized exchange gain/loss: month-end revaluation of open foreign receivables, reversed the next day. */
  UNREALIZED_EXCHANGE: 4310,
  /** Paise left over by converting the lines of a foreign entry one by one (DESIGN §19's rounding account). */
  EXCHANGE_ROUNDING: 4390,
  /** Contra-revenue: voided invoices and credit notes. */
  REVENUE_REVERSALS: 4900,
} as const;

export type AccountCode = (typeof Account)[keyof typeof Account];

export const ACCOUNT_NAMES: Record<AccountCode, string> = {
  [Account.CASH]: 'Cash and bank',
  [Account.GATEWAY_CLEARING]: 'Gateway clearing',
  [Account.RECEIVABLES]: 'Accounts receivable',
  [Account.TDS_RECEIVABLE]: 'TDS receivable',
  [Account.ADVANCE_TAX]: 'GST paid on advances',
  [Account.CGST_PAYABLE]: 'CGST output tax payable',
  [Account.SGST_PAYABLE]: 'SGST/UTGST output tax payable',
  [Account.IGST_PAYABLE]: 'IGST output tax payable',
  [Account.CUSTOMER_CREDIT]: 'Customer credit (credit notes)',
  [Account.CUSTOMER_ADVANCES]: 'Customer advances (unapplied payments)',
  [Account.REFUNDS_PAYABLE]: 'Refunds payable',
  [Account.PREPAID_CREDIT]: 'Prepaid credit (paid credit grants)',
  [Account.DEFERRED_REVENUE]: 'Deferred revenue',
  [Account.REVENUE]: 'Revenue',
  [Account.EXPIRED_CREDIT_INCOME]: 'Expired credit income',
  [Account.EXCHANGE_GAIN_LOSS]: 'Realized exchange gain/loss',
  [Account.UNREALIZED_EXCHANGE]: 'Unrealized exchange gain/loss',
  [Account.EXCHANGE_ROUNDING]: 'Exchange rounding differences',
  [Account.REVENUE_REVERSALS]: 'Revenue reversals',
};
