import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { gstinStateCode } from '../tax/index.js';
import type { BillingAddressInput, CreateCustomerBody, Customer, UpdateCustomerBody } from './customers.schemas.js';
import type { BillingAddress } from './customers.tables.js';
import {
  ancestorIds,
  levelsBelow,
  findCustomerRow,
  findCustomerRowByEmail,
  findCustomerRows,
  insertCustomer,
  listCustomerRows,
  customersPerTestClock,
  testClockExists,
  updateCustomerRow,
  type CustomerFilter,
  type CustomerRow,
} from './customers.repository.js';

export function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    email: row.email,
    name: row.name,
    external_id: row.external_id,
    phone: row.phone,
    gstin: row.gstin,
    billing_address: row.billing_address,
    sez: row.sez,
    metadata: row.metadata,
    test_clock_id: row.test_clock_id ?? null,
    parent_customer_id: row.parent_customer_id ?? null,
    bill_to: row.bill_to ?? 'self',
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** What the tax helpers need; both a Customer and a CustomerRow fit. */
type TaxIdentity = { gstin: string | null; billing_address: BillingAddress | null };

/**
 * The customer's country. With no billing address DESIGN §10's default applies: India, so a
 * customer known only by e-mail is taxed as domestic, never silently zero-rated as an export.
 */
export function customerCountry(customer: TaxIdentity): string {
  return customer.billing_address?.country ?? 'IN';
}

/** The GST place of supply: the GSTIN's state first, else an Indian billing address's state. */
export function customerStateCode(customer: TaxIdentity): string | null {
  if (customer.gstin) return gstinStateCode(customer.gstin);
  if (customer.billing_address?.country === 'IN') return customer.billing_address.state_code ?? null;
  return null;
}

/** Every key present, so stored addresses (and responses) have one shape. */
function toBillingAddress(input: BillingAddressInput | null | undefined): BillingAddress | null {
  if (!input) return null;
  return {
    line1: input.line1 ?? null,
    line2: input.line2 ?? null,
    city: input.city ?? null,
    state_code: input.state_code || null,
    postal_code: input.postal_code ?? null,
    country: input.country,
  };
}

/**
 * A GSTIN is an Indian registration, so a billing address given alongside must be in India. Its
 * state may differ from the GSTIN's (a head-office GSTIN with a branch address is valid): place of
 * supply follows the GSTIN (DESIGN §6). `changed` names which side the caller just sent, so the
 * error points at it.
 */
function assertTaxIdentity(customer: TaxIdentity, changed: { gstin: boolean; address: boolean }): void {
  const { gstin, billing_address: address } = customer;
  if (!gstin || !address) return;
  if (address.country !== 'IN') {
    throw errors.invalidField(changed.gstin ? 'gstin' : 'billing_address.country', 'a GSTIN belongs to a customer in India (billing_address.country IN)');
  }
}

/** The deepest a hierarchy goes: a top parent and four levels below it (decision 0550). */
export const MAX_HIERARCHY_LEVELS = 5;

/**
 * The parent a customer may take (decision 0550): one of this tenant (another tenant's answers 404
 * like a missing one), on the same test clock, never the customer itself or one below it (a
 * cycle), and the chain from the top parent down to the lowest descendant at most
 * MAX_HIERARCHY_LEVELS deep. `selfId` is null on creation (a new customer has nothing below it).
 */
async function assertParent(ctx: Ctx, parentId: string, self: { id: string | null; test_clock_id: string | null }): Promise<void> {
  const parent = await findCustomerRow(ctx.tx, ctx.tenantId, parentId);
  if (!parent) throw errors.notFound('parent customer');
  if ((parent.test_clock_id ?? null) !== self.test_clock_id) {
    throw errors.invalidField('parent_customer_id', 'must be a customer on the same test clock (or, like this one, on none)');
  }
  const above = await ancestorIds(ctx.tx, ctx.tenantId, parentId, MAX_HIERARCHY_LEVELS);
  if (self.id !== null && (parentId === self.id || above.includes(self.id))) {
    throw errors.conflict(
      parentId === self.id
        ? 'a customer cannot be its own parent'
        : 'that parent is already below this customer in the hierarchy: the two would pay for each other',
      'customer_hierarchy_cycle',
    );
  }
  const below = self.id === null ? 0 : await levelsBelow(ctx.tx, ctx.tenantId, self.id, MAX_HIERARCHY_LEVELS);
  // Levels: the parent's ancestors, the parent, this customer, and what hangs below it.
  if (above.length + 2 + below > MAX_HIERARCHY_LEVELS) {
    throw errors.conflict(
      `a customer hierarchy is at most ${MAX_HIERARCHY_LEVELS} levels deep; under that parent this one would make ${above.length + 2 + below}`,
      'customer_hierarchy_too_deep',
    );
  }
}

/** bill_to 'parent' needs a parent; clearing the parent (bill_to not given) bills the customer itself again. */
function billTo(parentId: string | null, given: 'self' | 'parent' | undefined, current: 'self' | 'parent'): 'self' | 'parent' {
  if (given === 'parent' && parentId === null) throw errors.invalidField('bill_to', "can be 'parent' only for a customer with a parent_customer_id");
  if (given !== undefined) return given;
  return parentId === null ? 'self' : current;
}

async function assertEmailFree(ctx: Ctx, email: string, exceptId?: string): Promise<void> {
  const holder = await findCustomerRowByEmail(ctx.tx, ctx.tenantId, email);
  if (holder && holder.id !== exceptId) {
    throw errors.conflict(`a customer with e-mail '${email}' already exists`, 'customer_email_taken');
  }
}

export async function createCustomer(ctx: Ctx, input: CreateCustomerBody): Promise<Customer> {
  // The unique index on (tenant_id, lower(email)) still stops a concurrent twin (answered 409);
  // this check only gives the usual case a clearer message.
  await assertEmailFree(ctx, input.email);
  const billingAddress = toBillingAddress(input.billing_address);
  const gstin = input.gstin ?? null;
  assertTaxIdentity({ gstin, billing_address: billingAddress }, { gstin: true, address: true });
  const testClockId = input.test_clock_id ?? null;
  if (testClockId !== null && !(await testClockExists(ctx.tx, ctx.tenantId, testClockId))) throw errors.notFound('test clock');
  const parentId = input.parent_customer_id ?? null;
  if (parentId !== null) await assertParent(ctx, parentId, { id: null, test_clock_id: testClockId });
  const row: CustomerRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    email: input.email,
    name: input.name ?? null,
    external_id: input.external_id ?? null,
    phone: input.phone ?? null,
    gstin,
    billing_address: billingAddress,
    sez: input.sez ?? false,
    metadata: input.metadata ?? {},
    test_clock_id: testClockId,
    parent_customer_id: parentId,
    bill_to: billTo(parentId, input.bill_to, 'self'),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertCustomer(ctx.tx, {
    ...row,
    billing_address: billingAddress ? JSON.stringify(billingAddress) : null,
    metadata: JSON.stringify(row.metadata),
  });
  const created = toCustomer(row);
  await emitEvent(ctx, 'customer.created', created);
  return created;
}

export async function getCustomer(ctx: ReadCtx, id: string): Promise<Customer> {
  const row = await findCustomerRow(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('customer');
  return toCustomer(row);
}

export async function findCustomer(tx: Tx, tenantId: string, id: string): Promise<Customer | undefined> {
  const row = await findCustomerRow(tx, tenantId, id);
  return row && toCustomer(row);
}

/** Case-insensitive, like the uniqueness rule. */
export async function findCustomerByEmail(tx: Tx, tenantId: string, email: string): Promise<Customer | undefined> {
  const row = await findCustomerRowByEmail(tx, tenantId, email);
  return row && toCustomer(row);
}

/** Several customers at once (for embedding in lists); missing ids are simply absent. */
export async function findCustomers(tx: Tx, tenantId: string, ids: string[]): Promise<Customer[]> {
  return (await findCustomerRows(tx, tenantId, [...new Set(ids)])).map(toCustomer);
}

export async function listCustomers(ctx: ReadCtx, filter: CustomerFilter, page: Page): Promise<{ customers: Customer[]; total: number }> {
  const { rows, total } = await listCustomerRows(ctx.tx, ctx.tenantId, filter, page);
  return { customers: rows.map(toCustomer), total };
}

/** The parent and bill_to an update sets (checked: assertParent), or nothing when it names neither. */
async function hierarchyPatch(
  ctx: Ctx,
  current: CustomerRow,
  given: UpdateCustomerBody,
): Promise<Partial<Pick<CustomerRow, 'parent_customer_id' | 'bill_to'>>> {
  if (given.parent_customer_id === undefined && given.bill_to === undefined) return {};
  const parentId = given.parent_customer_id !== undefined ? given.parent_customer_id : current.parent_customer_id;
  if (given.parent_customer_id && given.parent_customer_id !== current.parent_customer_id) {
    await assertParent(ctx, given.parent_customer_id, { id: current.id, test_clock_id: current.test_clock_id ?? null });
  }
  return { parent_customer_id: parentId, bill_to: billTo(parentId, given.bill_to, current.bill_to) };
}

/**
 * PUT as a partial update. The row is locked first so that the GSTIN/address agreement is checked
 * against the version being changed, not one a concurrent update is replacing. `metadata` and
 * `billing_address` are replaced whole, not merged.
 */
export async function updateCustomer(ctx: Ctx, id: string, input: UpdateCustomerBody): Promise<Customer> {
  const current = await findCustomerRow(ctx.tx, ctx.tenantId, id, { forUpdate: true });
  if (!current) throw errors.notFound('customer');
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as UpdateCustomerBody;
  if (Object.keys(given).length === 0) return toCustomer(current);

  if (given.email !== undefined) await assertEmailFree(ctx, given.email, id);
  const billingAddress = given.billing_address !== undefined ? toBillingAddress(given.billing_address) : current.billing_address;
  const gstin = given.gstin !== undefined ? given.gstin : current.gstin;
  assertTaxIdentity({ gstin, billing_address: billingAddress }, { gstin: given.gstin !== undefined, address: given.billing_address !== undefined });
  const hierarchy = await hierarchyPatch(ctx, current, given);

  const row = await updateCustomerRow(ctx.tx, ctx.tenantId, id, {
    ...(given.email !== undefined ? { email: given.email } : {}),
    ...(given.name !== undefined ? { name: given.name } : {}),
    ...(given.external_id !== undefined ? { external_id: given.external_id } : {}),
    ...(given.phone !== undefined ? { phone: given.phone } : {}),
    ...(given.gstin !== undefined ? { gstin: given.gstin } : {}),
    ...(given.sez !== undefined ? { sez: given.sez } : {}),
    ...(given.billing_address !== undefined ? { billing_address: billingAddress ? JSON.stringify(billingAddress) : null } : {}),
    ...(given.metadata !== undefined ? { metadata: JSON.stringify(given.metadata ?? {}) } : {}),
    ...hierarchy,
    updated_at: ctx.now,
  });
  if (!row) throw errors.notFound('customer');
  const updated = toCustomer(row);
  await emitEvent(ctx, 'customer.updated', updated);
  return updated;
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { childrenBilledTo, customerRefs } from './customers.repository.js';

/** How many customers live on each of these test clocks (the test clocks module shows the count). */
export async function countCustomersOnTestClocks(tx: Tx, tenantId: string, clockIds: string[]): Promise<Map<string, number>> {
  return new Map((await customersPerTestClock(tx, tenantId, clockIds)).map((r) => [r.test_clock_id, r.n]));
}
