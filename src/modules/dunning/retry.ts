import type { Ctx } from '../../platform/context.js';
import type { ActionOutcome } from './dunning.tables.js';

/**
 * How a `retry_payment` step asks collections to charge the invoice again. Collections registers
 * it at start-up; it runs inside the step's transaction, so it must only record and queue the
 * charge (the gateway call happens in collections' own job, never inside this transaction).
 * Without one registered, retry steps are recorded as skipped.
 */
export type PaymentRetrier = (ctx: Ctx, invoiceId: string) => Promise<{ outcome: ActionOutcome; detail: string }>;

let registered: PaymentRetrier | undefined;

export function registerPaymentRetrier(retrier: PaymentRetrier): void {
  registered = retrier;
}

export function paymentRetrier(): PaymentRetrier | undefined {
  return registered;
}
