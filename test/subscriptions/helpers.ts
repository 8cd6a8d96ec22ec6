import { expect } from 'vitest';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import type { Tenant, TestKosh } from '../support/harness.js';

let counter = 0;
const next = () => `${Date.now().toString(36)}${(counter += 1)}`;

/** A valid GSTIN from its first 14 characters. */
export const gstin = (base: string) => base + gstinCheckCharacter(base);

/** A tenant whose primary entity is in Karnataka (29), so a Karnataka customer pays CGST + SGST. */
export async function karnatakaTenant(t: TestKosh): Promise<Tenant> {
  return t.registerTenant({ gstin: gstin('29AAACA1234A1Z') });
}

export type PlanOptions = { amount?: number; interval_unit?: string; interval_count?: number; trial_days?: number; currency?: string; prices?: unknown[] };

export async function createPlan(tenant: Tenant, options: PlanOptions = {}): Promise<{ id: string; code: string; name: string }> {
  const code = `plan-${next()}`;
  const body = options.prices
    ? {
        name: `Plan ${code}`,
        code,
        interval_unit: options.interval_unit ?? 'month',
        interval_count: options.interval_count ?? 1,
        trial_days: options.trial_days ?? 0,
        prices: options.prices,
      }
    : {
        name: `Plan ${code}`,
        code,
        interval_unit: options.interval_unit ?? 'month',
        interval_count: options.interval_count ?? 1,
        trial_days: options.trial_days ?? 0,
        amount: options.amount ?? 100_000,
        currency: options.currency ?? 'INR',
      };
  const res = await tenant.api('POST', '/v1/plans', body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** A customer in Karnataka with a GSTIN (intra-state: CGST 9% + SGST 9%). */
export async function createCustomer(tenant: Tenant): Promise<string> {
  const res = await tenant.api('POST', '/v1/customers', { email: `c-${next()}@customer.test`, name: 'Customer', gstin: gstin('29BBBBB2222B1Z') });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

export async function subscribe(tenant: Tenant, body: Record<string, unknown>) {
  const res = await tenant.api('POST', '/v1/subscriptions', body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** Every invoice of a subscription, oldest first. */
export async function invoicesOf(tenant: Tenant, subscriptionId: string) {
  const res = await tenant.api('GET', `/v1/invoices?subscription_id=${subscriptionId}&limit=1000`);
  expect(res.status, res.text).toBe(200);
  return [...res.body.data].reverse();
}

export async function getSubscription(tenant: Tenant, id: string) {
  const res = await tenant.api('GET', `/v1/subscriptions/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** Moves the clock and runs the worker until nothing is due (the billing run included). */
export async function travelTo(t: TestKosh, at: string): Promise<void> {
  t.clock.set(at);
  await t.kosh.worker.drain();
}

/** Pays an invoice in full offline. */
export async function pay(tenant: Tenant, invoice: { id: string; customer_id: string; amount_due: number; currency: string }): Promise<void> {
  const res = await tenant.api('POST', '/v1/payments/offline', {
    customer_id: invoice.customer_id,
    invoice_id: invoice.id,
    amount: invoice.amount_due,
    currency: invoice.currency,
    payment_type: 'bank_transfer',
  });
  expect(res.status, res.text).toBe(201);
}

/** The types of a tenant's events about one object, oldest first. */
export async function eventTypesOf(tenant: Tenant, objectId: string): Promise<string[]> {
  const res = await tenant.api('GET', `/v1/events?object_id=${objectId}&limit=1000`);
  expect(res.status, res.text).toBe(200);
  return [...res.body.data].reverse().map((e: { type: string }) => e.type);
}

/** Cancels subscriptions now, so later clock jumps in the same file do not keep renewing them. */
export async function retire(tenant: Tenant, ...ids: string[]): Promise<void> {
  for (const id of ids) {
    const res = await tenant.api('POST', `/v1/subscriptions/${id}/cancel`, { at_period_end: false });
    expect([200, 409], res.text).toContain(res.status);
  }
}
