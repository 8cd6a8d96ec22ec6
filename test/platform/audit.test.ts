import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { appendAudit } from '../../src/platform/audit/audit.js';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { typedApi } from '../support/typed-api.js';

/**
 * The audit log (DESIGN §17): one record per mutation, with the right actor, in the mutation's
 * own transaction, append-only in the database.
 */
let sink: MailSink;
let t: TestKosh;
let acme: Tenant;
type Session = { cookie: string; csrf: string };
let finance: Session;
let financeId: string;

function sessionOf(res: ApiResponse): Session {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const value = (name: string) =>
    cookies
      .find((c) => c.startsWith(`${name}=`))!
      .split(';')[0]!
      .slice(name.length + 1);
  return { cookie: `kosh_session=${value('kosh_session')}; kosh_csrf=${value('kosh_csrf')}`, csrf: value('kosh_csrf') };
}
/** The typed client with an operator's session cookie (and the CSRF header on writes). */
const as = (s: Session) =>
  typedApi((method, url, body, headers = {}) =>
    t.api(method, url, body, { cookie: s.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': s.csrf }), ...headers }),
  );

async function auditOf(query: { actor_id?: string; object_type?: string; object_id?: string; action?: string; limit?: number }) {
  const res = await acme.http.GET('/v1/audit-log', { query });
  expect(res.status, res.text).toBe(200);
  return res.body.data as {
    actor: { type: string; id: string };
    action: string;
    object_type: string;
    object_id: string;
    changes: Record<string, unknown>;
    request_id: string;
    ip: string;
  }[];
}

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in' } });
  acme = await t.registerTenant({ name: 'Acme Audit' });
  const invited = await acme.http.POST('/v1/users/invitations', { body: { email: 'fin@acme.test', role: 'finance' } });
  expect(invited.status).toBe(201);
  await t.kosh.worker.drain();
  const token = decodeURIComponent(/token=(\S+)/.exec(sink.messages.at(-1)!.text ?? '')![1]!);
  const accepted = await typedApi(t.api).POST('/v1/auth/invitations/accept', { body: { token, name: 'Fin', password: 'correct horse battery' } });
  expect(accepted.status).toBe(201);
  finance = sessionOf(accepted);
  financeId = accepted.body.data.user.id;
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

describe('audit log', () => {
  it('records a write by an API key with the key as actor, the object and the request id', async () => {
    const res = await acme.http.POST('/v1/plans', {
      body: { name: 'Pro', code: 'pro', interval_unit: 'month', amount: 49_900, currency: 'INR' },
      headers: { 'x-request-id': 'req-audit-1' },
    });
    expect(res.status).toBe(201);
    const [entry] = await auditOf({ object_id: res.body.data.id });
    expect(entry).toMatchObject({ action: 'plan.create', object_type: 'plan', object_id: res.body.data.id, request_id: 'req-audit-1' });
    expect(entry!.actor.type).toBe('api_key');
    const keys = await acme.http.GET('/v1/developer/keys');
    expect(keys.body.data.map((k: { id: string }) => k.id)).toContain(entry!.actor.id);
  });

  it('records an operator as actor with the changed fields, before → after', async () => {
    const customer = await acme.http.POST('/v1/customers', { body: { name: 'Meera', email: 'meera@example.in' } });
    const invoice = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: customer.body.data.id,
        currency: 'INR',
        lines: [{ description: 'Work', unit_amount: 10_000 }],
      },
    });
    expect(invoice.status, invoice.text).toBe(201);
    const voided = await as(finance).POST('/v1/invoices/{id}/void', { path: { id: invoice.body.data.id } });
    expect(voided.status, voided.text).toBe(200);
    const entries = await auditOf({ object_type: 'invoice', object_id: invoice.body.data.id });
    const entry = entries.find((e) => e.action === 'invoice.void')!;
    expect(entry.actor).toMatchObject({ type: 'user', id: financeId, label: 'fin@acme.test' });
    expect(entry.changes.status).toEqual({ from: invoice.body.data.status, to: 'void' });
    expect(entry.changes).not.toHaveProperty('updated_at');
    // Filters: by actor and by action.
    expect((await auditOf({ actor_id: financeId, action: 'invoice.void' })).map((e) => e.object_id)).toEqual([invoice.body.data.id]);

    const renamed = await acme.http.PATCH('/v1/users/{id}', { path: { id: financeId }, body: { name: 'Fin Lead' } });
    expect(renamed.status).toBe(200);
    const [patch] = await auditOf({ object_type: 'user', action: 'user.update' });
    expect(patch!.changes).toEqual({ name: { from: 'Fin', to: 'Fin Lead' } });
  });

  it('never logs a password hash or TOTP secret', async () => {
    const rows = await t.database.db.selectFrom('audit_log').select('changes').where('tenant_id', '=', acme.tenantId).execute();
    const text = JSON.stringify(rows);
    expect(text).not.toMatch(/argon2|password_hash|totp_secret|key_hash/);
  });

  it("never holds sealed credentials (an entity's IRP user name and password)", async () => {
    const entity = (await acme.http.GET('/v1/entities')).body.data[0]!;
    const first14 = '29AAECA1234F1Z';
    const res = await acme.http.PATCH('/v1/entities/{id}', {
      path: { id: entity.id },
      body: {
        state_code: '29',
        gstin: first14 + gstinCheckCharacter(first14),
        address: { line1: '1 Residency Road', city: 'Bengaluru', postal_code: '560025' },
        einvoicing: { enabled: true, provider: 'nic', credentials: { username: 'irp_user', password: 'irp-password' } },
      },
    });
    expect(res.status, res.text).toBe(200);
    const [entry] = await auditOf({ object_id: entity.id });
    expect(entry!.action).toBe('entity.update');
    expect(entry!.changes).toHaveProperty('einvoicing_provider');
    expect(JSON.stringify(entry!.changes)).not.toMatch(/credentials|"v1\./);
  });

  it('rolls the record back with an action that fails', async () => {
    const before = (await auditOf({ limit: 1000 })).length;
    const customer = await acme.http.POST('/v1/customers', { body: { name: 'Dup', email: 'dup@example.in' } });
    expect(customer.status).toBe(201);
    const dup = await acme.http.POST('/v1/customers', { body: { name: 'Dup', email: 'dup@example.in' } });
    expect(dup.status).toBe(409);
    const after = await auditOf({ limit: 1000 });
    expect(after.length).toBe(before + 1);
    expect(after.filter((e) => e.action === 'customer.create' && e.object_id === customer.body.data.id)).toHaveLength(1);
  });

  it('writes the record in the transaction of the change: a transaction that fails after appending keeps nothing', async () => {
    const at = t.clock.now();
    const attempt = t.database.db.transaction().execute(async (tx) => {
      await appendAudit(tx, {
        tenantId: acme.tenantId,
        actor: { type: 'system', id: null, label: 'test' },
        action: 'test.rolled_back',
        objectType: null,
        objectId: null,
        changes: {},
        ip: null,
        requestId: null,
        at,
      });
      await sql`SELECT 1`.execute(tx);
      throw new Error('the change failed');
    });
    await expect(attempt).rejects.toThrow('the change failed');
    expect(await auditOf({ action: 'test.rolled_back' })).toEqual([]);
  });

  it('is append-only in the database: UPDATE and DELETE are refused', async () => {
    const update = sql`UPDATE audit_log SET action = 'forged' WHERE tenant_id = ${acme.tenantId}`.execute(t.database.db);
    await expect(update).rejects.toThrow(/append-only/);
    const remove = sql`DELETE FROM audit_log WHERE tenant_id = ${acme.tenantId}`.execute(t.database.db);
    await expect(remove).rejects.toThrow(/append-only/);
    const count = await t.database.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', acme.tenantId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBeGreaterThan(0);
    expect((await auditOf({ action: 'forged' })).length).toBe(0);
  });

  it('is shown to admins only and scoped to the tenant', async () => {
    expect((await as(finance).GET('/v1/audit-log')).status).toBe(403);
    const other = await t.registerTenant({ name: 'Other' });
    const res = await other.http.GET('/v1/audit-log');
    expect(res.status).toBe(200);
    expect(res.body.data.every((e) => e.actor.id !== financeId)).toBe(true);
  });

  it('pages newest first with page/limit and with starting_after / ending_before', async () => {
    const all = (await acme.http.GET('/v1/audit-log', { query: { limit: 1000 } })).body.data.map((e: { id: string }) => e.id) as string[];
    expect(all.length).toBeGreaterThanOrEqual(4);
    const first = await acme.http.GET('/v1/audit-log', { query: { limit: 2 } });
    expect(first.body).toMatchObject({ has_more: true, total_count: all.length });
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2));
    const next = await acme.http.GET('/v1/audit-log', { query: { limit: 2, starting_after: all[1] } });
    expect(next.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(2, 4));
    const previous = await acme.http.GET('/v1/audit-log', { query: { limit: 2, ending_before: all[3] } });
    expect(previous.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(1, 3));
    expect((await acme.api('GET', `/v1/audit-log?starting_after=${all[0]}&ending_before=${all[1]}`)).status).toBe(400);
  });
});
