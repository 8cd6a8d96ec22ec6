import type { Ctx } from '../../platform/context.js';
import { getEntity } from '../../modules/entities/index.js';
import { certificateFormOn, getInvoiceRow, type TdsCodeEntry } from '../../modules/invoices/index.js';
import { certifyPaymentTds, findPayment, type CertifyPaymentTdsBody, type Payment } from '../../modules/payments/index.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { deductionDay, sectionOf } from '../invoices/record-certified-tds.js';

/**
 * Records the certificate for the TDS a customer withheld with a payment (decision 0770): the number,
 * the section or s.393 payment code checked against the day of deduction (decision 0510), and the
 * form that day implies (Form 16A; Form 131 from 1 April 2026). No money moves: the payment already
 * posted the TDS to 1200 TDS receivable. The TDS report then lists the deduction as certified.
 */
export async function certifyWithheldTds(ctx: Ctx, paymentId: string, input: CertifyPaymentTdsBody, tdsCodes: readonly TdsCodeEntry[]): Promise<Payment> {
  const payment = await findPayment(ctx.tx, ctx.tenantId, paymentId);
  if (!payment) throw errors.notFound('payment');
  if (!payment.invoice_id) throw errors.conflict('this payment withheld no TDS, so there is no certificate to record', 'payment_has_no_tds');
  const invoice = await getInvoiceRow(ctx, payment.invoice_id);
  const entity = await getEntity(ctx, invoice.entity_id);
  const paidOn = deductionDay(undefined, payment.recorded_at, entity.time_zone, ctx.now);
  // s.393(1)(c) (s.194J before): deducted at credit or payment, whichever is earlier — never after the payment.
  if (input.deducted_on && input.deducted_on > paidOn) throw errors.invalidField('deducted_on', `must not be after the payment's day (${paidOn})`);
  const deductedOn = input.deducted_on ?? paidOn;
  const section = sectionOf(input.section, deductedOn, tdsCodes);
  const certified = await certifyPaymentTds(ctx, payment.id, {
    certificate_number: input.certificate_number,
    section: section?.section ?? null,
    payment_code: section?.payment_code ?? null,
    certificate_form: section?.certificate_form ?? certificateFormOn(deductedOn),
    deducted_on: deductedOn,
  });
  await emitEvent(ctx, 'payment.tds_certified', certified);
  return certified;
}
