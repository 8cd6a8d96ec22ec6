import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type TestKosh } from '../support/harness.js';

/**
 * What the dashboard reads before anyone signs in: the mode and whether e-mail can go out (with no
 * SMTP it says so on every page), and the icon browsers ask for at /favicon.ico.
 */
let t: TestKosh;
beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(async () => t?.close());

describe('the dashboard deployment note', () => {
  it('says the mode and that mail is not configured when there is no SMTP_URL', async () => {
    expect(t.config.smtpUrl).toBeUndefined();
    const answer = await t.call({ method: 'GET', url: '/dashboard/config.json' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ mode: 'test', mail_configured: false });
    expect(answer.headers['cache-control']).toBe('no-store');
  });

  it('hands the invitation link to the inviter in test mode with no SMTP, and it works', async () => {
    const tenant = await t.registerTenant();
    const invited = await tenant.api('POST', '/v1/users/invitations', { email: 'nomail@tenant.test', role: 'finance' });
    expect(invited.status, invited.text).toBe(201);
    const url = new URL(invited.body.data.accept_url);
    expect(url.pathname).toBe('/dashboard/accept-invitation');
    const token = url.searchParams.get('token')!;
    const accepted = await t.api('POST', '/v1/auth/invitations/accept', { token, name: 'No Mail', password: 'correct horse battery' });
    expect(accepted.status, accepted.text).toBe(201);
    // The list never carries it.
    const list = await tenant.api('GET', '/v1/users/invitations');
    expect(list.body.data[0]).not.toHaveProperty('accept_url');
  });

  it('answers /favicon.ico with an image', async () => {
    const answer = await t.call({ method: 'GET', url: '/favicon.ico' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(answer.text).toContain('<svg');
  });
});
