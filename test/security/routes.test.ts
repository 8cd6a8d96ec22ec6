import { describeSecurity } from '../support/security.js';

/**
 * The guarantee behind STYLE habit 3: every `/v1` route in the app — including routes added after
 * this file was written — refuses bad keys and treats another tenant's ids as nonexistent. Routes
 * are discovered from the app's OpenAPI document; a route with a path parameter but no factory in
 * test/support/factories.ts fails here by name.
 */
describeSecurity('every /v1 route', {
  expectRoutes: ['POST /v1/plans', 'GET /v1/plans', 'GET /v1/plans/{id}', 'DELETE /v1/developer/keys/{id}', 'PATCH /v1/entities/{id}'],
});
