import { expect } from 'vitest';
import type { Tenant, TestKosh } from './harness.js';

/** A signed-in portal customer: the `portal_session` cookie (name=value) and the session's CSRF token. */
export type PortalSessionCookie = { cookie: string; csrf: string };

/** Opens a customer's portal the way the customer does: the API's one-time link, then `/portal/login`. */
export async function openPortalSession(t: TestKosh, tenant: Tenant, customerId: string): Promise<PortalSessionCookie> {
  const link = await tenant.api('POST', `/v1/customers/${customerId}/portal-sessions`);
  expect(link.status, link.text).toBe(201);
  const opened = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
  expect(opened.status).toBe(303);
  const header = opened.headers['set-cookie'];
  const cookie = String(Array.isArray(header) ? header[0] : header).split(';')[0]!;
  const me = await t.call({ method: 'GET', url: '/portal/api/me', headers: { cookie } });
  expect(me.status, me.text).toBe(200);
  return { cookie, csrf: me.body.data.csrf_token };
}
