import type { ReadCtx } from '../../platform/context.js';
import { paginate } from '../../platform/db/paginate.js';
import type { Page } from '../../platform/http/envelope.js';
import { toIso } from '../../platform/time.js';
import { getCustomer } from '../customers/index.js';
import { BALANCE_SOURCES, type BalanceTransaction, type CustomerBalance } from './balances.schemas.js';
import type { CustomerBalanceTransactionsView } from './balances.tables.js';
import './balances.tables.js';

/**
 * A customer's balance per currency and source (DESIGN §20): the sum of the movements in
 * `customer_balance_transactions`, so the statement and the balance can never disagree. Advances
 * are spendable until applied or refunded; a credit note's balance until spent, refunded, expired
 * or voided.
 */
export async function customerBalance(ctx: ReadCtx, customerId: string): Promise<CustomerBalance> {
  await getCustomer(ctx, customerId); // 404 for another tenant's or an unknown customer
  const rows = await ctx.tx
    .selectFrom('customer_balance_transactions')
    .select(['currency', 'source'])
    .select((eb) => eb.fn.sum<string>('amount').as('total'))
    .where('tenant_id', '=', ctx.tenantId)
    .where('customer_id', '=', customerId)
    .groupBy(['currency', 'source'])
    .orderBy('currency')
    .execute();
  const byCurrency = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const sources = byCurrency.get(r.currency) ?? Object.fromEntries(BALANCE_SOURCES.map((s) => [s, 0]));
    sources[r.source] = Number(r.total);
    byCurrency.set(r.currency, sources);
  }
  return {
    object: 'customer_balance',
    customer_id: customerId,
    balances: [...byCurrency]
      .map(([currency, sources]) => ({ currency, available: Object.values(sources).reduce((a, b) => a + b, 0), sources }))
      .filter((b) => b.available !== 0 || Object.values(b.sources).some((v) => v !== 0)),
  };
}

function toTransaction(row: CustomerBalanceTransactionsView): BalanceTransaction {
  return {
    id: row.id,
    object: 'balance_transaction',
    customer_id: row.customer_id,
    currency: row.currency,
    source: row.source,
    source_id: row.source_id,
    type: row.type,
    amount: Number(row.amount),
    document: { type: row.document_type, id: row.document_id, number: row.document_number },
    created_at: toIso(row.created_at),
  };
}

/** Every movement of the customer's balance, newest first, paged like every list (offset or cursor). */
export async function listBalanceTransactions(
  ctx: ReadCtx,
  customerId: string,
  filter: { currency?: string | undefined; source?: string | undefined },
  page: Page,
): Promise<{ transactions: BalanceTransaction[]; total: number }> {
  await getCustomer(ctx, customerId);
  let q = ctx.tx.selectFrom('customer_balance_transactions').where('tenant_id', '=', ctx.tenantId).where('customer_id', '=', customerId);
  if (filter.currency) q = q.where('currency', '=', filter.currency);
  if (filter.source) q = q.where('source', '=', filter.source);
  const { rows, total } = await paginate<CustomerBalanceTransactionsView>(ctx.tx, q, { tenantId: ctx.tenantId, table: 'customer_balance_transactions', page });
  return { transactions: rows.map(toTransaction), total };
}
