import type { Ctx } from '../../platform/context.js';
import { getEntity } from '../../modules/entities/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { Account, postEntry } from '../../modules/ledger/index.js';
import { markPaymentSettled, unsettledGatewayPayments } from '../../modules/payments/index.js';
import type { CollectionsEnv } from '../../modules/collections/index.js';

export const SETTLE_PAYMENTS_JOB = 'collections.settle_payments';
/** Gateways pay captured money out to the bank after T+2 days (Razorpay's and Stripe's standard schedule). */
export const SETTLEMENT_DELAY_MS = 2 * 24 * 60 * 60 * 1000;

/**
 * Settlement (docs/ledger.md, decision 0041): a gateway payment captured SETTLEMENT_DELAY_MS ago
 * has been paid out by the gateway, so its amount moves from gateway clearing to cash
 * (Dr cash, Cr gateway clearing), once per payment. Refunds are taken from clearing when made,
 * as gateways deduct them from the next payout.
 */
export async function settleGatewayPayments(env: CollectionsEnv, now: Date, limit = 1000): Promise<number> {
  const due = await unsettledGatewayPayments(env.db, env.config.mode, new Date(now.getTime() - SETTLEMENT_DELAY_MS), limit);
  let settled = 0;
  for (const payment of due) {
    const done = await env.db.transaction().execute(async (tx) => {
      const ctx: Ctx = { tx, tenantId: payment.tenant_id, now };
      if (!(await markPaymentSettled(tx, payment.tenant_id, payment.id, now))) return false;
      const invoice = payment.invoice_id ? await getInvoiceRow(ctx, payment.invoice_id) : undefined;
      if (!invoice) return false;
      const entity = await getEntity(ctx, invoice.entity_id);
      await postEntry(ctx, {
        ledgerId: entity.tb_ledger_id,
        entityId: entity.id,
        kind: 'payment.settled',
        referenceType: 'payment',
        referenceId: payment.id,
        currency: payment.currency,
        description: `Settlement of ${payment.gateway} payment ${payment.gateway_payment_id}`,
        // Clearing holds the payment at its capture rate; the payout moves that value to cash.
        rate: payment.exchange_rate,
        lines: [
          { account: Account.CASH, debit: payment.amount, customerId: payment.customer_id },
          { account: Account.GATEWAY_CLEARING, credit: payment.amount, customerId: payment.customer_id },
        ],
      });
      return true;
    });
    if (done) settled += 1;
  }
  return settled;
}
