import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { factories } from '../support/factories.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { asOperator, newOperator, withKey, type Session } from '../support/operators.js';

/**
 * Four eyes (DESIGN §21, decision 0221): with credit-note approval on, the actor (operator or API
 * key) who asked for a refund or a credit note cannot also approve it.
 */
let sink: MailSink;
let t: TestKosh;
let acme: Tenant;
let asha: Session;
let ravi: Session;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in', KOSH_RATE_LIMIT_PORTAL_LOGIN: '1000' } });
  acme = await t.registerTenant({ name: 'Acme Cloud' });
  expect((await acme.api('PATCH', '/v1/settings', { credit_note_approval_required: true })).status).toBe(200);
  asha = await newOperator(t, sink, acme, 'asha@acme.test', 'finance');
  ravi = await newOperator(t, sink, acme, 'ravi@acme.test', 'finance');
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

describe('credit notes under approval', () => {
  describe('approve', () => {
    it('refuses the finance operator who requested a refund, and lets another release it', async () => {
      const paymentId = await factories['/v1/payments']!(acme, {});
      const refund = await asOperator(t, asha, 'POST', `/v1/payments/${paymentId}/refunds`, { reason: 'customer asked' });
      expect(refund.status, refund.text).toBe(201);
      const noteId: string = refund.body.data.credit_note_id;

      const alone = await asOperator(t, asha, 'POST', `/v1/credit-notes/${noteId}/approve`);
      expect(alone.status, alone.text).toBe(409);
      expect(alone.body.error.reason).toBe('approval_requires_second_person');
      expect((await acme.api('GET', `/v1/credit-notes/${noteId}`)).body.data.status).toBe('pending_approval');

      const second = await asOperator(t, ravi, 'POST', `/v1/credit-notes/${noteId}/approve`);
      expect(second.status, second.text).toBe(200);
      expect(second.body.data.status).toBe('used');
    });

    it('refuses the operator who asked for a goodwill note, who may still withdraw it', async () => {
      const customerId = await factories['/v1/customers']!(acme, {});
      const note = await asOperator(t, ravi, 'POST', '/v1/credit-notes', { customer_id: customerId, amount: 2_500, reason: 'goodwill' });
      expect(note.status, note.text).toBe(201);
      expect(note.body.data.status).toBe('pending_approval');
      const alone = await asOperator(t, ravi, 'POST', `/v1/credit-notes/${note.body.data.id}/approve`);
      expect(alone.status, alone.text).toBe(409);
      expect(alone.body.error.reason).toBe('approval_requires_second_person');
      const second = await asOperator(t, asha, 'POST', `/v1/credit-notes/${note.body.data.id}/approve`);
      expect(second.status, second.text).toBe(200);
      expect(second.body.data.status).toBe('issued');

      // Withdrawing one's own request needs no second person.
      const typo = await asOperator(t, ravi, 'POST', '/v1/credit-notes', { customer_id: customerId, amount: 700, reason: 'typo' });
      const withdrawn = await asOperator(t, ravi, 'POST', `/v1/credit-notes/${typo.body.data.id}/reject`);
      expect(withdrawn.status, withdrawn.text).toBe(200);
      expect(withdrawn.body.data.status).toBe('rejected');
    });

    it('refuses the API key that asked, and takes an operator as the second person', async () => {
      const key = (await acme.api('POST', '/v1/developer/keys', { name: 'finance bot', role: 'finance' })).body.data.key as string;
      const customerId = await factories['/v1/customers']!(acme, {});
      const note = await withKey(t, key, 'POST', '/v1/credit-notes', { customer_id: customerId, amount: 1_000, reason: 'goodwill' });
      expect(note.status, note.text).toBe(201);
      const alone = await withKey(t, key, 'POST', `/v1/credit-notes/${note.body.data.id}/approve`);
      expect(alone.status, alone.text).toBe(409);
      expect(alone.body.error.reason).toBe('approval_requires_second_person');
      const second = await asOperator(t, asha, 'POST', `/v1/credit-notes/${note.body.data.id}/approve`);
      expect(second.status, second.text).toBe(200);
    });
  });
});
