/** The public face of the module: what other modules and flows may use. */

export {
  createEntity,
  getEntity,
  getPrimaryEntity,
  updateEntity,
  toEntity,
  invoiceExchangeRate,
  entityRateAt,
  transactionRate,
  type TransactionRate,
  einvoicingCredentialsAad,
  type InvoiceExchangeRate,
} from './entities.service.js';
export type { EntityRow } from './entities.repository.js';
export { countryCode, exchangeRateField, postalAddress, timeZoneField, type LegalEntity, type EinvoicingCredentials } from './entities.schemas.js';
export type { EinvoicingProvider } from './entities.tables.js';
export type { PostalAddress } from './entities.tables.js';
export { takeDocumentNumber, takeDocumentNumbers, formatDocumentNumber, MAX_DOCUMENT_NUMBER_LENGTH, type DocumentKind } from './numbering.js';
export { createEntityBody, entitySchema, exchangeRateSchema, putExchangeRateBody, updateEntityBody } from './entities.schemas.js';
export { listEntities, listExchangeRates, putExchangeRate } from './entities.service.js';
export { findEntity, findPrimaryEntity } from './entities.service.js';
export { entityAt, lutMissing, lutState, listLuts, putLut, type LutState } from './luts.js';
export { lutListSchema, lutParams, lutSchema, putLutBody } from './entities.schemas.js';
export { AFA_FREE_LIMIT_LISTED, AFA_FREE_LIMIT_STANDARD, afaFreeLimit } from './emandate.js';
export type { EmandateCategory } from './entities.tables.js';
