/** The public face of accounting integrations (DESIGN §16). */
export { accessTokenFor, ConnectionPaused } from './tokens.js';
export type { AccountingConnection, SyncRun } from './accounting.schemas.js';
export type { AccountingProvider } from './accounting.tables.js';
export { TALLY_LEDGERS } from './tally.js';
