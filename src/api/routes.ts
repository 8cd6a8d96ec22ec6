import type { AppDeps } from '../app-deps.js';
import type { KoshApp } from '../platform/http/server.js';
import { registerTenantRoutes } from './tenants/tenants.routes.js';
import { registerPlanRoutes } from './plans/plans.routes.js';
import { registerUsageRoutes } from './usage/usage.routes.js';
import { registerCouponRoutes } from './coupons/coupons.routes.js';
import { registerRetentionOfferRoutes } from './retention-offers/retention-offers.routes.js';
import { registerEntityRoutes } from './entities/entities.routes.js';
import { registerPeriodRoutes } from './periods/periods.routes.js';
import { registerCustomerRoutes } from './customers/customers.routes.js';
import { registerSubscriptionRoutes } from './subscriptions/subscriptions.routes.js';
import { registerInvoiceRoutes } from './invoices/invoices.routes.js';
import { registerDocumentRoutes } from './documents/documents.routes.js';
import { registerPaymentRoutes } from './payments/payments.routes.js';
import { registerLedgerRoutes } from './ledger/ledger.routes.js';
import { registerCreditNoteRoutes } from './credit-notes/credit-notes.routes.js';
import { registerEventRoutes } from './events/events.routes.js';
import { registerWebhookRoutes } from './webhooks/webhooks.routes.js';
import { registerGiftRoutes } from './gifts/gifts.routes.js';
import { registerReferralRoutes } from './referrals/referrals.routes.js';
import { registerQuoteRoutes } from './quotes/quotes.routes.js';
import { registerPortalRoutes } from './portal/portal.routes.js';
import { registerImporterRoutes } from './importer/importer.routes.js';
import { registerAnalyticsRoutes } from './analytics/analytics.routes.js';
import { registerOrganizationRoutes } from './organizations/organizations.routes.js';
import { registerDunningRoutes } from './dunning/dunning.routes.js';
import { registerNotificationRoutes } from './notifications/notifications.routes.js';
import { registerAccountingRoutes } from './accounting/accounting.routes.js';
import { registerCollectionsRoutes } from './collections/collections.routes.js';
import { registerEinvoicingRoutes } from './einvoicing/einvoicing.routes.js';
import { registerGstReturnRoutes } from './gst-returns/gst-returns.routes.js';
import { registerFinanceRoutes } from './finance/finance.routes.js';
import { registerOperatorRoutes } from './operators/operators.routes.js';
import { registerAuditRoutes } from './audit/audit.routes.js';
import { registerDashboardRoutes } from './dashboard/dashboard.routes.js';
import { registerAdvanceRoutes, registerLutRoutes } from './advances/advances.routes.js';
import { registerCreditRoutes } from './credits/credits.routes.js';
import { registerEntitlementRoutes } from './entitlements/entitlements.routes.js';
import { registerAlertRoutes } from './alerts/alerts.routes.js';
import { registerTestClockRoutes } from './test-clocks/test-clocks.routes.js';

/** Every resource's routes, in the order they appear in the API docs. HTTP is the top layer: it calls flows and modules, never the reverse. */
const registrars: ((app: KoshApp, deps: AppDeps) => void)[] = [
  registerTenantRoutes,
  registerEntityRoutes,
  registerPeriodRoutes,
  registerPlanRoutes,
  registerUsageRoutes,
  registerCouponRoutes,
  registerRetentionOfferRoutes,
  registerCustomerRoutes,
  registerSubscriptionRoutes,
  registerInvoiceRoutes,
  registerDocumentRoutes,
  registerPaymentRoutes,
  registerLedgerRoutes,
  registerCreditNoteRoutes,
  registerEventRoutes,
  registerWebhookRoutes,
  registerGiftRoutes,
  registerReferralRoutes,
  registerQuoteRoutes,
  registerPortalRoutes,
  registerImporterRoutes,
  registerAnalyticsRoutes,
  registerOrganizationRoutes,
  registerDunningRoutes,
  registerNotificationRoutes,
  registerAccountingRoutes,
  registerCollectionsRoutes,
  registerEinvoicingRoutes,
  registerGstReturnRoutes,
  registerFinanceRoutes,
  registerOperatorRoutes,
  registerAuditRoutes,
  registerDashboardRoutes,
  registerAdvanceRoutes,
  registerLutRoutes,
  registerCreditRoutes,
  registerEntitlementRoutes,
  registerAlertRoutes,
  registerTestClockRoutes,
];

export function registerApiRoutes(app: KoshApp, deps: AppDeps): void {
  for (const register of registrars) register(app, deps);
}
