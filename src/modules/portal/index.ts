/** The customer portal exposes nothing to other modules: its surface is HTTP (/portal, /portal/api). */
export { SESSION_COOKIE } from './portal.tokens.js';
