import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimumRole, RESOURCE_ROLES, ROUTE_OVERRIDES } from '../../src/api/access.js';
import { fetchOpenApi, routesOf, servedRoutes } from '../support/security.js';
import { startTestKosh, type TestKosh } from '../support/harness.js';

/**
 * The role table (src/api/access.ts) decides every `/v1` route: a route added under a resource the
 * table does not list has no decision and fails here by name (and is refused to every operator).
 */
let t: TestKosh;
beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(() => t?.close());

const pattern = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

describe('role table', () => {
  it('has a minimum role for every /v1 route the app serves (public sign-in routes aside)', async () => {
    const doc = await fetchOpenApi(t);
    const publicRoutes = new Set(
      routesOf(doc)
        .filter((r) => r.public)
        .map((r) => r.label),
    );
    const served = servedRoutes(t);
    expect(served.length).toBeGreaterThan(100);
    const undecided = served
      .filter((label) => !publicRoutes.has(label))
      .filter((label) => {
        const [method, path] = label.split(' ') as [string, string];
        return minimumRole(method, pattern(path)) === undefined;
      });
    expect(undecided, 'add these routes (or their resource) to src/api/access.ts').toEqual([]);
  });

  it('names only routes that exist in its overrides', () => {
    const served = new Set(servedRoutes(t).map((label) => label.replace(/\{([^}]+)\}/g, ':$1')));
    expect(Object.keys(ROUTE_OVERRIDES).filter((route) => !served.has(route))).toEqual([]);
  });

  it('gives reads to viewers, customers and portal links and sending invoices to support, money to finance, the team to admins', () => {
    expect(minimumRole('GET', '/v1/invoices/:id')).toBe('viewer');
    expect(minimumRole('GET', '/v1/ledger/trial-balance')).toBe('viewer');
    expect(minimumRole('POST', '/v1/customers')).toBe('support');
    expect(minimumRole('POST', '/v1/customers/:id/portal-sessions')).toBe('support');
    expect(minimumRole('POST', '/v1/invoices/:id/send')).toBe('support');
    for (const money of [
      '/v1/invoices/:id/void',
      '/v1/invoices/:id/finalize',
      '/v1/payments/offline',
      '/v1/credit-notes',
      '/v1/subscriptions/:id/cancel',
      '/v1/plans',
    ]) {
      expect(minimumRole('POST', money), money).toBe('finance');
    }
    for (const admin of ['/v1/users/invitations', '/v1/developer/keys', '/v1/webhooks', '/v1/entities'])
      expect(minimumRole('POST', admin), admin).toBe('admin');
    expect(minimumRole('PATCH', '/v1/settings')).toBe('admin');
    expect(minimumRole('POST', '/v1/not-a-resource')).toBeUndefined();
    expect(Object.hasOwn(RESOURCE_ROLES, 'constructor')).toBe(false);
    expect(minimumRole('GET', '/v1/constructor')).toBeUndefined();
  });
});
