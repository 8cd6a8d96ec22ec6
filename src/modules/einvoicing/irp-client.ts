import type { Config } from '../../platform/config.js';
import type { EinvoicingCredentials, EinvoicingProvider } from '../entities/index.js';
import type { IrpDocument } from './irp-document.js';

/** What the IRP answers for a registered document. */
export type IrpRegistration = {
  irn: string;
  ack_no: string;
  ack_date: Date;
  signed_invoice: string;
  signed_qr_code: string;
};

/**
 * The IRP refused the document (its error code and message, e.g. 2150 "Duplicate IRN"). Not
 * retried: the same document would be refused again.
 */
export class IrpRejection extends Error {
  constructor(
    readonly code: string,
    /** Kosh's words: stored and answered. */
    message: string,
    /** The IRP's own text, for the log only: never stored (DESIGN §21). */
    readonly detail?: string,
  ) {
    super(message);
  }
}

/**
 * The IRP could not be reached, failed (5xx) or answered something unreadable: retried. The
 * message is Kosh's words; what the other side said goes to the log only (`detail`).
 */
export class IrpUnavailable extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** Duplicate IRN: the document was registered before (an earlier attempt whose answer was lost). */
export const DUPLICATE_IRN = '2150';

export type IrpDocumentRef = { type: 'INV' | 'CRN' | 'DBN'; number: string; date: string };

/**
 * An Invoice Registration Portal. Network failures and 5xx answers throw ordinary errors (the job
 * retries them); refusals throw IrpRejection.
 */
export interface IrpClient {
  generate(document: IrpDocument): Promise<IrpRegistration>;
  /** The registration of a document already registered (duplicate-IRN path). */
  findByDocument(ref: IrpDocumentRef): Promise<IrpRegistration>;
  cancel(irn: string, reasonCode: number, remarks: string): Promise<{ canceled_at: Date }>;
}

export type IrpClientContext = {
  provider: EinvoicingProvider;
  gstin: string;
  credentials: EinvoicingCredentials | null;
  config: Config;
  now: () => Date;
};
