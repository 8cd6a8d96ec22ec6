import type { KoshModule } from '../app-deps.js';
import { tenantsModule } from './tenants/tenants.module.js';
import { plansModule } from './plans/plans.module.js';
import { entitiesModule } from './entities/entities.module.js';
import { customersModule } from './customers/customers.module.js';

/** Every module of Kosh, in the order their routes appear in the API docs. */
export const modules: KoshModule[] = [tenantsModule, entitiesModule, plansModule, customersModule];
