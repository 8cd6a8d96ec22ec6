import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinFor } from '../../../test/support/billing.js';
import { startTestKosh, type TestKosh } from '../../../test/support/harness.js';
import { emitEvent } from '../../platform/events/events.js';
import { finalStatuses } from '../collections/collections.states.js';
import { statusesBefore } from '../../platform/db/transition.js';
import { executionTransitions, transitionExecution } from './dunning.states.js';

let t: TestKosh;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set(new Date('2026-04-01T09:00:00Z'));
});

afterAll(async () => {
  await t?.close();
});

describe('the dunning execution state table', () => {
  it('only an active execution moves; recovered and canceled are final, exhausted only lowers its wall', () => {
    expect(finalStatuses(executionTransitions, ['active', 'recovered', 'exhausted', 'canceled'])).toEqual(['recovered', 'exhausted', 'canceled']);
    expect(statusesBefore(executionTransitions, 'recovered')).toEqual(['active']);
    expect(statusesBefore(executionTransitions, 'canceled')).toEqual(['active']);
    expect(statusesBefore(executionTransitions, 'exhausted')).toEqual(['active', 'exhausted']);
  });

  it('refuses to exhaust, step or reopen the wall of an execution its payment already recovered, and leaves it as it was', async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29') }); // its default campaign dunns failed charges
    const customer = (await tenant.http.POST('/v1/customers', { body: { email: 'late@dunning.test', name: 'Late Payer' } })).body.data;
    const invoice = (
      await tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: customer.id,
          currency: 'INR',
          lines: [{ description: 'Service', quantity: 1, unit_amount: 100000, hsn_code: '998314' }],
        },
      })
    ).body.data;
    const db = t.kosh.deps.db;
    await db
      .transaction()
      .execute((tx) =>
        emitEvent({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, 'invoice.payment_failed', { id: invoice.id, customer_id: customer.id }),
      );
    const [started] = (await tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoice.id } })).body.data;
    expect(started!.status).toBe('active');

    const refused = await db.transaction().execute(async (tx) => {
      const recovered = await transitionExecution(tx, tenant.tenantId, started!.id, 'recover', { ended_at: t.clock.now() });
      expect(recovered?.status).toBe('recovered');
      return {
        exhaust: await transitionExecution(tx, tenant.tenantId, started!.id, 'exhaust', { ended_at: t.clock.now() }),
        step: await transitionExecution(tx, tenant.tenantId, started!.id, 'step', { steps_done: 5 }),
        raiseWall: await transitionExecution(tx, tenant.tenantId, started!.id, 'raise_wall', { payment_wall_active: true }),
        lowerWall: await transitionExecution(tx, tenant.tenantId, started!.id, 'lower_wall', { payment_wall_active: false }),
      };
    });
    expect(refused).toEqual({ exhaust: undefined, step: undefined, raiseWall: undefined, lowerWall: undefined });
    const [after] = (await tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoice.id } })).body.data;
    expect(after).toMatchObject({ id: started!.id, status: 'recovered', steps_done: 0 });
  });
});
