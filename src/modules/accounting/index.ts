/** The public face of accounting integrations (DESIGN §16). */
export { accessTokenFor, ConnectionPaused } from './tokens.js';
export type { AccountingConnection, SyncRun } from './accounting.schemas.js';
export type { AccountingProvider } from './accounting.tables.js';
export { TALLY_LEDGERS } from './tally.js';
export {
  callbackQuery,
  connectBody,
  connectResponse,
  connectionSchema,
  deletedConnectionSchema,
  providerParams,
  syncBody,
  syncRunSchema,
  syncStatusQuery,
  syncStatusResponse,
  tallyExportQuery,
  taxMappingBody,
} from './accounting.schemas.js';
export { completeConnect, disconnect, listConnections, startConnect, startSync, syncStatus, updateTaxMapping } from './accounting.service.js';
export { tallyEntity, tallyExport } from './tally.js';
export { callbackUrl } from './accounting.service.js';
export { bindingCookieName } from './oauth.js';
