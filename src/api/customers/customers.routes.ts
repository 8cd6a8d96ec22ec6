import { errors } from '../../platform/errors.js';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { createCustomerBody, customerSchema, listCustomersQuery, updateCustomerBody } from '../../modules/customers/index.js';
import { createCustomer, getCustomer, listCustomers, updateCustomer } from '../../modules/customers/index.js';

export function registerCustomerRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/customers',
    {
      schema: {
        errors: ['not_found'],
        tags: ['customers'],
        summary: 'Create a customer (in test mode, optionally on a test clock: `test_clock_id`)',
        body: createCustomerBody,
        response: { 201: dataEnvelope(customerSchema) },
      },
    },
    (request, reply) => {
      if (request.body.test_clock_id && deps.config.mode === 'live')
        throw errors.validation(
          'test clocks exist in test mode only',
          [{ field: 'test_clock_id', message: 'test clocks exist in test mode only' }],
          'test_clock_live_mode',
        );
      return runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createCustomer(ctx, request.body) } }));
    },
  );

  app.get(
    '/v1/customers',
    {
      schema: {
        tags: ['customers'],
        summary: 'List customers, newest first',
        querystring: listCustomersQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(customerSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { customers, total } = await listCustomers(readCtx(deps, request), request.query, page);
      return listResponse(customers, total, page);
    },
  );

  app.get(
    '/v1/customers/:id',
    { schema: { tags: ['customers'], summary: 'Get a customer', params: idParams, response: { 200: dataEnvelope(customerSchema) } } },
    async (request) => ({ data: await getCustomer(readCtx(deps, request), request.params.id) }),
  );

  // PATCH is the method for a partial update; PUT stays for clients that use it (same behaviour).
  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/v1/customers/:id',
      {
        schema: {
          tags: ['customers'],
          summary: 'Update a customer (absent fields stay as they are; null clears an optional field)',
          params: idParams,
          body: updateCustomerBody,
          response: { 200: dataEnvelope(customerSchema) },
        },
      },
      (request, reply) =>
        runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateCustomer(ctx, request.params.id, request.body) } })),
    );
  }
}
