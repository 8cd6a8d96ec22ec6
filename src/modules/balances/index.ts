/** The public face of the customer balance statement (advances, credit notes; DESIGN §20). */
export { customerBalance, listBalanceTransactions } from './balances.service.js';
export { BALANCE_SOURCES, balanceTransactionSchema, balanceTransactionsQuery, customerBalanceSchema, type BalanceSource } from './balances.schemas.js';
export type { BalanceTransaction, CustomerBalance } from './balances.schemas.js';
