/** The public face of the module: what other modules and flows may use. */

export {
  countCustomersOnTestClocks,
  createCustomer,
  customerCountry,
  customerStateCode,
  findCustomer,
  findCustomerByEmail,
  findCustomers,
  getCustomer,
  listCustomers,
  toCustomer,
} from './customers.service.js';
export type { CustomerRow } from './customers.repository.js';

export { createCustomerBody, type CreateCustomerBody, type Customer } from './customers.schemas.js';
export type { BillingAddress } from './customers.tables.js';
export { customerSchema, listCustomersQuery, updateCustomerBody } from './customers.schemas.js';
export { updateCustomer } from './customers.service.js';
export { childrenBilledTo, customerRefs, MAX_HIERARCHY_LEVELS } from './customers.service.js';
