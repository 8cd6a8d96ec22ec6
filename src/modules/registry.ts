import type { KoshModule } from '../app-deps.js';
import { tenantsModule } from './tenants/tenants.module.js';
import { plansModule } from './plans/plans.module.js';
import { couponsModule } from './coupons/coupons.module.js';
import { entitiesModule } from './entities/entities.module.js';
import { customersModule } from './customers/customers.module.js';
import { subscriptionsModule } from './subscriptions/subscriptions.module.js';
import { invoicesModule } from './invoices/invoices.module.js';
import { documentsModule } from './documents/documents.module.js';
import { paymentsModule } from './payments/payments.module.js';
import { ledgerModule } from './ledger/ledger.module.js';
import { creditNotesModule } from './credit-notes/credit-notes.module.js';
import { eventsModule } from './events/events.module.js';
import { webhooksModule } from './webhooks/webhooks.module.js';
import { giftsModule } from './gifts/gifts.module.js';
import { referralsModule } from './referrals/referrals.module.js';
import { quotesModule } from './quotes/quotes.module.js';
import { portalModule } from './portal/portal.module.js';
import { importerModule } from './importer/importer.module.js';
import { analyticsModule } from './analytics/analytics.module.js';
import { organizationsModule } from './organizations/organizations.module.js';

import { accountingModule } from './accounting/accounting.module.js';

import { einvoicingModule } from './einvoicing/einvoicing.module.js';
import { gstReturnsModule } from './gst-returns/gst-returns.module.js';
import { periodsModule } from './periods/periods.module.js';

import { financeModule } from './finance/finance.module.js';
import { usageModule } from './usage/usage.module.js';
import { operatorsModule } from './operators/operators.module.js';
import { advancesModule } from './advances/advances.module.js';
import { balancesModule } from './balances/balances.module.js';
import { creditsModule } from './credits/credits.module.js';
import { entitlementsModule } from './entitlements/entitlements.module.js';
import { alertsModule } from './alerts/alerts.module.js';
import { testClocksModule } from './test-clocks/test-clocks.module.js';

/** Every module of Kosh, in the order their routes appear in the API docs. */
export const modules: KoshModule[] = [
  tenantsModule,
  entitiesModule,
  plansModule,
  usageModule,
  couponsModule,
  customersModule,
  subscriptionsModule,
  invoicesModule,
  documentsModule,
  paymentsModule,
  creditNotesModule,
  ledgerModule,
  eventsModule,
  webhooksModule,
  giftsModule,
  referralsModule,
  quotesModule,
  portalModule,
  importerModule,
  analyticsModule,
  organizationsModule,
  accountingModule,
  einvoicingModule,
  gstReturnsModule,
  periodsModule,
  financeModule,
  operatorsModule,
  advancesModule,
  balancesModule,
  creditsModule,
  entitlementsModule,
  alertsModule,
  testClocksModule,
];
