import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { endpointRow } from '../../../test/support/webhooks.js';
import { findSubscribedEndpoints, insertEndpoint, updateEndpoint } from './webhooks.repository.js';

/** The enabled endpoints are read once per transaction, and again after the transaction writes one. */
let t: TestKosh;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant();
});
afterAll(() => t.close());

const endpoint = (events: string[]) => endpointRow(tenant.tenantId, t.clock.now(), { events });

describe('subscribed endpoints within one transaction', () => {
  it('filter one read by type, and see the endpoints the transaction itself creates or disables', async () => {
    await t.database.db.transaction().execute(async (tx) => {
      expect(await findSubscribedEndpoints(tx, tenant.tenantId, ['invoice.paid'])).toEqual([]);
      const all = await insertEndpoint(tx, endpoint(['*']));
      const paid = await insertEndpoint(tx, endpoint(['invoice.paid']));
      expect((await findSubscribedEndpoints(tx, tenant.tenantId, ['invoice.paid'])).map((e) => e.id)).toEqual([all.id, paid.id]);
      expect((await findSubscribedEndpoints(tx, tenant.tenantId, ['plan.created'])).map((e) => e.id)).toEqual([all.id]);
      await updateEndpoint(tx, tenant.tenantId, all.id, { enabled: false });
      expect((await findSubscribedEndpoints(tx, tenant.tenantId, ['invoice.paid', 'plan.created'])).map((e) => e.id)).toEqual([paid.id]);
    });
  });

  it('reads afresh in the next transaction, which sees what others committed', async () => {
    const db = t.database.db;
    const before = await db.transaction().execute((tx) => findSubscribedEndpoints(tx, tenant.tenantId, ['customer.created']));
    const added = await insertEndpoint(db, endpoint(['customer.created']));
    const after = await db.transaction().execute((tx) => findSubscribedEndpoints(tx, tenant.tenantId, ['customer.created']));
    expect(after.map((e) => e.id)).toEqual([...before.map((e) => e.id), added.id]);
  });
});
