import type { Generated } from 'kysely';
import type { Json, NullableJson, Timestamp, TableAccess } from '../../platform/db/schema.js';

/** As stored: every key present, absent parts null, country always set (default IN). */
export type BillingAddress = {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state_code: string | null;
  postal_code: string | null;
  country: string;
};

export interface CustomersTable {
  tenant_id: string;
  id: string;
  email: string;
  name: string | null;
  external_id: string | null;
  phone: string | null;
  gstin: string | null;
  /** A unit or developer in a Special Economic Zone: supplies to it are zero-rated. */
  sez: boolean;
  billing_address: NullableJson<BillingAddress>;
  metadata: Json<Record<string, unknown>>;
  /** The test clock the customer lives on (test mode; decision 0440), or null: billed at the real time. */
  test_clock_id: string | null;
  /** The parent company in the same tenant (decision 0550), or null. */
  parent_customer_id: string | null;
  /** 'parent': the customer's subscriptions renew onto the parent's consolidated invoice. */
  bill_to: Generated<'self' | 'parent'>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    customers: CustomersTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const customersTableAccess: TableAccess = {
  customers: { read: ['dunning', 'importer'], write: ['importer'] },
};
