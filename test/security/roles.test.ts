import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { asOperator, newOperator, OPERATOR_PASSWORD, withKey, type Session } from '../support/operators.js';

/**
 * Roles reach keys (DESIGN §21, decision 0220): a key carries a role, governed by the same role
 * table as operators; nobody grants more than they hold; only owners make or touch owners.
 */
let sink: MailSink;
let t: TestKosh;
let acme: Tenant;
let ownerId: string;
let admin: Session;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in', KOSH_RATE_LIMIT_PORTAL_LOGIN: '1000' } });
  acme = await t.registerTenant({ name: 'Acme Cloud', owner: { email: 'founder@acme.test', name: 'Founder', password: OPERATOR_PASSWORD } });
  const owners = await acme.api('GET', '/v1/users');
  ownerId = owners.body.data.find((u: { role: string }) => u.role === 'owner').id;
  admin = await newOperator(t, sink, acme, 'admin@acme.test', 'admin');
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

describe('API keys', () => {
  describe('an admin escalating through a key it mints', () => {
    it('gets an admin key, which can neither promote its admin to owner nor demote or remove the owner', async () => {
      const minted = await asOperator(t, admin, 'POST', '/v1/developer/keys', { name: 'escalation' });
      expect(minted.status, minted.text).toBe(201);
      expect(minted.body.data.role).toBe('admin');
      const key: string = minted.body.data.key;

      const promote = await withKey(t, key, 'PATCH', `/v1/users/${admin.userId}`, { role: 'owner' });
      expect(promote.status, promote.text).toBe(403);
      expect(promote.body.error.reason).toBe('role_forbidden');
      const demote = await withKey(t, key, 'PATCH', `/v1/users/${ownerId}`, { role: 'viewer' });
      expect(demote.status, demote.text).toBe(403);
      const remove = await withKey(t, key, 'DELETE', `/v1/users/${ownerId}`);
      expect(remove.status, remove.text).toBe(403);
      const inviteOwner = await withKey(t, key, 'POST', '/v1/users/invitations', { email: 'accomplice@acme.test', role: 'owner' });
      expect(inviteOwner.status, inviteOwner.text).toBe(403);

      const team = await acme.api('GET', '/v1/users');
      expect(team.body.data.find((u: { id: string }) => u.id === ownerId)).toMatchObject({ role: 'owner' });
      expect(team.body.data.find((u: { id: string }) => u.id === admin.userId)).toMatchObject({ role: 'admin' });
    });

    it('cannot mint an owner key, nor revoke the owner key', async () => {
      const ownerKey = await asOperator(t, admin, 'POST', '/v1/developer/keys', { name: 'mine', role: 'owner' });
      expect(ownerKey.status, ownerKey.text).toBe(403);
      expect(ownerKey.body.error.reason).toBe('role_forbidden');
      const keys = await acme.api('GET', '/v1/developer/keys');
      const founding = keys.body.data.find((k: { name: string }) => k.name === 'default');
      expect(founding.role).toBe('owner');
      const revoke = await asOperator(t, admin, 'DELETE', `/v1/developer/keys/${founding.id}`);
      expect(revoke.status, revoke.text).toBe(403);
    });
  });

  describe('create', () => {
    it('is admin by default; an owner key may mint any role, and a key of a lower role is held to the role table', async () => {
      const byDefault = await acme.api('POST', '/v1/developer/keys', { name: 'ci' });
      expect(byDefault.body.data.role).toBe('admin');
      const owner = await acme.api('POST', '/v1/developer/keys', { name: 'second owner key', role: 'owner' });
      expect(owner.status, owner.text).toBe(201);
      expect(owner.body.data.role).toBe('owner');

      const viewer = await acme.api('POST', '/v1/developer/keys', { name: 'read only', role: 'viewer' });
      expect(viewer.body.data.role).toBe('viewer');
      const read = await withKey(t, viewer.body.data.key, 'GET', '/v1/plans');
      expect(read.status, read.text).toBe(200);
      const write = await withKey(t, viewer.body.data.key, 'POST', '/v1/plans', { code: 'nope', name: 'Nope' });
      expect(write.status, write.text).toBe(403);
      expect(write.body.error.reason).toBe('role_forbidden');
      const mint = await withKey(t, viewer.body.data.key, 'POST', '/v1/developer/keys', { role: 'viewer' });
      expect(mint.status, mint.text).toBe(403);
    });

    it('lets an admin key grant at most admin', async () => {
      const adminKey = (await acme.api('POST', '/v1/developer/keys', { name: 'ops' })).body.data.key as string;
      const finance = await withKey(t, adminKey, 'POST', '/v1/developer/keys', { role: 'finance' });
      expect(finance.status, finance.text).toBe(201);
      const owner = await withKey(t, adminKey, 'POST', '/v1/developer/keys', { role: 'owner' });
      expect(owner.status, owner.text).toBe(403);
    });
  });
});

describe('the team', () => {
  it('is shown to admins only: a viewer reads neither the list nor an operator, only itself', async () => {
    const viewer = await newOperator(t, sink, acme, 'viewer@acme.test', 'viewer');
    const list = await asOperator(t, viewer, 'GET', '/v1/users');
    expect(list.status, list.text).toBe(403);
    expect(list.body.error.reason).toBe('role_forbidden');
    expect(list.text).not.toContain('founder@acme.test');
    const one = await asOperator(t, viewer, 'GET', `/v1/users/${ownerId}`);
    expect(one.status, one.text).toBe(403);
    expect(one.text).not.toContain('founder@acme.test');
    const me = await asOperator(t, viewer, 'GET', '/v1/auth/me');
    expect(me.body.data.user).toMatchObject({ email: 'viewer@acme.test', role: 'viewer' });

    const byAdmin = await asOperator(t, admin, 'GET', '/v1/users');
    expect(byAdmin.status, byAdmin.text).toBe(200);
    expect(byAdmin.body.data.map((u: { email: string }) => u.email)).toContain('founder@acme.test');
  });
});
