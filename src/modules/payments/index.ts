/** The public face of payments. */
export { savePayment, savePayments, getPayment, listPayments, toPayment, certifyPaymentTds, type PaymentTdsCertificate } from './payments.service.js';
export type { PaymentRow } from './payments.repository.js';

export { recordOfflinePaymentBody, paymentSchema, type Payment, type RecordOfflinePaymentBody } from './payments.schemas.js';
export { listPaymentsQuery, certifyPaymentTdsBody, type CertifyPaymentTdsBody } from './payments.schemas.js';
export { findPayment, findPaymentForUpdate, addRefunded, unsettledGatewayPayments, markPaymentSettled } from './payments.service.js';
