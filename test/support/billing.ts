import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import type { Tenant } from './harness.js';

/** A valid GSTIN for a state: the given PAN-shaped body plus its computed check character. */
export function gstinFor(stateCode: string, body = 'AAACA1234A1Z'): string {
  const first14 = `${stateCode}${body}`;
  return first14 + gstinCheckCharacter(first14);
}

export async function createCustomer(tenant: Tenant, body: Record<string, unknown> = {}): Promise<string> {
  const res = await tenant.api('POST', '/v1/customers', { email: `c${Math.random().toString(36).slice(2)}@example.in`, name: 'Customer', ...body });
  if (res.status !== 201) throw new Error(`customer: ${res.status} ${res.text}`);
  return res.body.data.id;
}

export async function createInvoice(tenant: Tenant, customerId: string, amounts: number[], extra: Record<string, unknown> = {}) {
  const res = await tenant.api('POST', '/v1/invoices', {
    customer_id: customerId,
    currency: 'INR',
    lines: amounts.map((unit_amount, i) => ({ description: `Line ${i + 1}`, unit_amount })),
    ...extra,
  });
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${res.text}`);
  return res.body.data;
}
