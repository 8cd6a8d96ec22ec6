import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { getCustomer } from '../../modules/customers/index.js';
import { receiveAdvance } from '../../modules/advances/index.js';
import { getEntity, getPrimaryEntity, transactionRate, type TransactionRate } from '../../modules/entities/index.js';
import { convertMinorUnits } from '../../platform/money.js';
import { applyToInvoice, assertTdsAllowed, getInvoiceRow } from '../../modules/invoices/index.js';
import { Account, postEntry } from '../../modules/ledger/index.js';
import { savePayment, type Payment, type RecordOfflinePaymentBody } from '../../modules/payments/index.js';

/**
 * SPEC 4.4: records money received outside any gateway. With an invoice, the payment and any TDS
 * the customer withheld settle its balance (Dr cash + Dr TDS receivable; Cr receivables); without
 * one, the money is a customer advance (Dr cash; Cr customer advances) with its receipt voucher
 * and the GST it carries (receiveAdvance, decision 0280). One transaction.
 */
export async function recordOfflinePayment(ctx: Ctx, input: RecordOfflinePaymentBody): Promise<Payment> {
  const customer = await getCustomer(ctx, input.customer_id);
  if (input.tds_amount > 0 && !input.invoice_id) {
    throw errors.invalidField('tds_amount', 'TDS can only be recorded against an invoice (give invoice_id)');
  }
  if (input.invoice_id && (input.entity_id || input.hsn_code)) {
    throw errors.invalidField(input.entity_id ? 'entity_id' : 'hsn_code', 'entity_id and hsn_code describe an advance: give them only without invoice_id');
  }
  const id = newId();
  let entity: Awaited<ReturnType<typeof getPrimaryEntity>> | undefined;
  let rate: TransactionRate;
  let entityCurrency: string;
  if (input.invoice_id) {
    // Lock the invoice first so concurrent payments on it queue up and see each other's effect.
    const invoice = await getInvoiceRow(ctx, input.invoice_id, true);
    if (invoice.customer_id !== customer.id) throw errors.invalidField('invoice_id', 'the invoice belongs to another customer');
    if (invoice.currency !== input.currency) {
      throw errors.invalidField('currency', `the invoice is in ${invoice.currency}; the payment must be too`);
    }
    if (invoice.status !== 'open' && invoice.status !== 'uncollectible') {
      throw errors.conflict(`cannot pay an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
    }
    assertTdsAllowed(invoice, input.tds_amount, 'tds_amount');
    if (input.tds_amount > invoice.amount_due) {
      throw errors.invalidField('tds_amount', `exceeds the invoice's outstanding balance of ${invoice.amount_due}`);
    }
    if (input.amount + input.tds_amount > invoice.amount_due) {
      throw errors.invalidField(
        'amount',
        `amount + tds_amount (${input.amount + input.tds_amount}) exceeds the invoice's outstanding balance of ${invoice.amount_due}`,
      );
    }
    await applyToInvoice(ctx, invoice.id, { paid: input.amount, tds: input.tds_amount });
    const entity = await getEntity(ctx, invoice.entity_id);
    const ledger = { ledgerId: entity.tb_ledger_id, entityId: entity.id };
    entityCurrency = entity.functional_currency;
    rate = await transactionRate(ctx, entity, input.currency, input.exchange_rate, ctx.now, invoice.exchange_rate);
    // Cash at the payment's rate; the receivable leaves at the invoice's: the difference is a
    // realized exchange gain or loss (Ind AS 21.28).
    await postEntry(ctx, {
      ...ledger,
      kind: 'payment.recorded',
      referenceType: 'payment',
      referenceId: id,
      currency: input.currency,
      description: `Offline ${input.payment_type} payment for invoice ${invoice.number}`,
      rate: rate.rate,
      exchangeDifference: 'realized',
      lines: [
        { account: Account.CASH, debit: input.amount, customerId: customer.id },
        { account: Account.TDS_RECEIVABLE, debit: input.tds_amount, customerId: customer.id, invoiceId: invoice.id },
        { account: Account.RECEIVABLES, credit: input.amount + input.tds_amount, customerId: customer.id, invoiceId: invoice.id },
      ],
    });
  } else {
    entity = input.entity_id ? await getEntity(ctx, input.entity_id) : await getPrimaryEntity(ctx);
    const ledger = { ledgerId: entity.tb_ledger_id, entityId: entity.id };
    entityCurrency = entity.functional_currency;
    rate = await transactionRate(ctx, entity, input.currency, input.exchange_rate, ctx.now, null);
    await postEntry(ctx, {
      ...ledger,
      kind: 'payment.recorded',
      referenceType: 'payment',
      referenceId: id,
      currency: input.currency,
      description: `Offline ${input.payment_type} payment (advance)`,
      rate: rate.rate,
      lines: [
        { account: Account.CASH, debit: input.amount, customerId: customer.id },
        { account: Account.CUSTOMER_ADVANCES, credit: input.amount, customerId: customer.id },
      ],
    });
  }
  const payment = await savePayment(ctx, {
    tenant_id: ctx.tenantId,
    id,
    customer_id: customer.id,
    invoice_id: input.invoice_id ?? null,
    payment_type: input.payment_type,
    channel: 'offline',
    status: 'succeeded',
    amount: input.amount,
    tds_amount: input.tds_amount,
    currency: input.currency,
    reference_number: input.reference_number ?? '',
    notes: input.notes ?? '',
    recorded_by: input.recorded_by ?? '',
    recorded_at: ctx.now,
    exchange_rate: rate.rate,
    exchange_rate_source: rate.source,
    functional_amount: rate.rate === null ? null : convertMinorUnits(input.amount, input.currency, entityCurrency, rate.rate),
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'payment.recorded', payment);
  if (entity)
    await receiveAdvance(ctx, {
      paymentId: id,
      entityId: entity.id,
      customer,
      currency: input.currency,
      amount: input.amount,
      hsnCode: input.hsn_code,
      exchangeRate: rate.rate,
    });
  return payment;
}
