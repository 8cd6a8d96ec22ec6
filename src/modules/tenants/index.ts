/** The public face of the module: what other modules and flows may use. */

export { getTenant, readSettings, getSettings, createTenantRecord, issueApiKey } from './tenants.service.js';
export type { NewApiKey, RegisterBody } from './tenants.schemas.js';
export type { Tenant, TenantSettings } from './tenants.schemas.js';
export type { SettingsRow } from './tenants.repository.js';
export { PORTAL_CANCELLATION, type PortalCancellation } from './tenants.tables.js';
export { apiKeySchema, createKeyBody, newApiKeySchema, registerBody, registerResponse, settingsSchema, updateSettingsBody } from './tenants.schemas.js';
export { tenantsServedBy, listApiKeys, revokeApiKey, updateSettings } from './tenants.service.js';
