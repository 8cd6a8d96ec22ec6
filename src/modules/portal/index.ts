/** The customer portal exposes nothing to other modules: its surface is HTTP (/portal, /portal/api). */
export { SESSION_COOKIE } from './portal.tokens.js';
export { type DashboardView, checkEmailPage, dashboardPage, linkInvalidPage, loginPage } from './portal.pages.js';
export {
  invoicePdfResponse,
  loggedOutResponse,
  loginBody,
  loginResponse,
  portalLinkSchema,
  portalSubscriptionSchema,
  profileSchema,
  redeemBody,
} from './portal.schemas.js';
export {
  type PortalSession,
  SESSION_TTL_MS,
  authenticate,
  createPortalLink,
  portalInvoicePdf,
  portalInvoices,
  portalProfile,
  portalSubscriptions,
  requestLoginLink,
  requesterOf,
  signIn,
  signOut,
} from './portal.service.js';
export { parseCookies, parseCredential, sameToken } from './portal.tokens.js';
