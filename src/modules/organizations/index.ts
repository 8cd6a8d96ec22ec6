/** The public face of organizations (nothing else uses it yet beyond its routes). */
export { parseRate } from './fx.js';
export {
  attachTenantBody,
  consolidatedMrrSchema,
  consolidatedQuery,
  createOrganizationBody,
  fxParams,
  fxRateBody,
  fxRateSchema,
  memberParams,
  organizationSchema,
  organizationTenantSchema,
} from './organizations.schemas.js';
export {
  attachSelf,
  consolidatedMrr,
  createOrganization,
  detachSelf,
  getFxRates,
  getOrganization,
  listOrganizationTenants,
  listOwnOrganizations,
  rotateJoinCode,
  setFxRate,
} from './organizations.service.js';
