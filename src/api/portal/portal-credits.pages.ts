import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReadCtx } from '../../platform/context.js';
import { blockingAlert } from '../../modules/alerts/index.js';
import { listBalanceTransactions } from '../../modules/balances/index.js';
import { listCreditGrants, toCreditGrant } from '../../modules/credits/index.js';
import { computeCustomerEntitlements, listFeatures, toFeature } from '../../modules/entitlements/index.js';
import { creditsPage, featuresPage, portalProfile, type CreditDrawView, type PortalSession } from '../../modules/portal/index.js';

type Pages = {
  sessionOf: (request: FastifyRequest) => Promise<PortalSession | null>;
  ctxOf: (s: PortalSession) => ReadCtx;
  sendPage: (reply: FastifyReply, status: number, html: string) => unknown;
  redirect: (reply: FastifyReply, location: string) => unknown;
};

/** How many draw-downs the credits page lists, newest first. */
const RECENT_DRAWS = 20;

/** The customer's recent draw-downs: the `credit_drawn` rows of the balance statement, paid and promotional. */
async function recentDraws(ctx: ReadCtx, customerId: string): Promise<CreditDrawView[]> {
  const page = { limit: 100, page: 1, offset: 0 };
  const [paid, promotional] = await Promise.all([
    listBalanceTransactions(ctx, customerId, { source: 'prepaid_credit' }, page),
    listBalanceTransactions(ctx, customerId, { source: 'promotional_credit' }, page),
  ]);
  return [...paid.transactions, ...promotional.transactions]
    .filter((t) => t.type === 'credit_drawn')
    .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0))
    .slice(0, RECENT_DRAWS);
}

/**
 * The portal's read-only credits and features pages (DESIGN §23): the same reads as the API's
 * credit grants, balance transactions and customer entitlements, for the signed-in customer only —
 * the customer comes from the session, never from the request, so no other customer's can be asked for.
 */
export function registerCreditPages(portal: FastifyInstance, pages: Pages): void {
  portal.get('/portal/credits', { schema: { hide: true } }, async (request, reply) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    const ctx = pages.ctxOf(s);
    const [profile, { grants, balances }, draws] = await Promise.all([
      portalProfile(ctx, s),
      listCreditGrants(ctx, s.customerId),
      recentDraws(ctx, s.customerId),
    ]);
    return pages.sendPage(reply, 200, creditsPage({ profile, balances, grants: grants.map(toCreditGrant), draws }));
  });

  portal.get('/portal/features', { schema: { hide: true } }, async (request, reply) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    const ctx = pages.ctxOf(s);
    const [profile, features, entitlements] = await Promise.all([
      portalProfile(ctx, s),
      listFeatures(ctx),
      computeCustomerEntitlements(ctx, s.customerId, blockingAlert),
    ]);
    return pages.sendPage(
      reply,
      200,
      featuresPage({
        profile,
        features: features.map(toFeature),
        values: entitlements.features,
        blocked: entitlements.blocked,
        blockedReason: entitlements.blocked_reason,
      }),
    );
  });
}
