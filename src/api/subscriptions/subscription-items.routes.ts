import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { principalOf, readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  addSubscriptionItem,
  previewSubscriptionItemChange,
  removeSubscriptionItem,
  updateSubscriptionItem,
} from '../../flows/subscriptions/change-subscription-items.js';
import {
  addSubscriptionItemBody,
  getSubscriptionRow,
  listSubscriptionItems,
  removeSubscriptionItemQuery,
  subscriptionItemChangeSchema,
  subscriptionItemSchema,
  updateSubscriptionItemBody,
} from '../../modules/subscriptions/index.js';

const tags = ['subscriptions'];
const itemParams = idParams.extend({ item_id: z.uuid({ message: 'must be a UUID' }) });
const change = { 200: dataEnvelope(subscriptionItemChangeSchema) };

/** Subscription items: add-ons beside the plan, prorated like a seat change (DESIGN §24, decision 0470). */
export function registerSubscriptionItemRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/subscriptions/:id/items',
    {
      schema: {
        tags,
        summary: "The subscription's items: its plan's price first, then the add-ons, oldest first",
        params: idParams,
        response: { 200: z.object({ data: z.array(subscriptionItemSchema) }) },
      },
    },
    async (request) => {
      const ctx = readCtx(deps, request);
      return { data: await listSubscriptionItems(ctx, await getSubscriptionRow(ctx, request.params.id)) };
    },
  );

  app.post(
    '/v1/subscriptions/:id/items',
    {
      schema: {
        tags,
        summary: 'Add an add-on price with a quantity, now, prorated to the day like a seat change (preview: nothing written)',
        params: idParams,
        body: addSubscriptionItemBody,
        response: change,
      },
    },
    async (request, reply) => {
      const { preview, ...input } = request.body;
      if (preview) {
        const data = await previewSubscriptionItemChange(deps.db, principalOf(request).tenantId, deps.clock.now(), (ctx) =>
          addSubscriptionItem(ctx, request.params.id, input, true),
        );
        return reply.code(200).send({ data });
      }
      return runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await addSubscriptionItem(ctx, request.params.id, input) } }));
    },
  );

  app.patch(
    '/v1/subscriptions/:id/items/:item_id',
    {
      schema: {
        tags,
        summary: "Change an add-on's quantity now, prorated to the day like a seat change (preview: nothing written)",
        params: itemParams,
        body: updateSubscriptionItemBody,
        response: change,
      },
    },
    async (request, reply) => {
      const { preview, ...input } = request.body;
      const { id, item_id: itemId } = request.params;
      if (preview) {
        const data = await previewSubscriptionItemChange(deps.db, principalOf(request).tenantId, deps.clock.now(), (ctx) =>
          updateSubscriptionItem(ctx, id, itemId, input, true),
        );
        return reply.code(200).send({ data });
      }
      return runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateSubscriptionItem(ctx, id, itemId, input) } }));
    },
  );

  app.delete(
    '/v1/subscriptions/:id/items/:item_id',
    {
      schema: {
        tags,
        summary: 'Remove an add-on now, crediting its unused time like a seat change (preview: nothing written)',
        params: itemParams,
        querystring: removeSubscriptionItemQuery,
        response: change,
      },
    },
    async (request, reply) => {
      const { preview, proration_behavior: behavior } = request.query;
      const { id, item_id: itemId } = request.params;
      if (preview) {
        const data = await previewSubscriptionItemChange(deps.db, principalOf(request).tenantId, deps.clock.now(), (ctx) =>
          removeSubscriptionItem(ctx, id, itemId, behavior, true),
        );
        return reply.code(200).send({ data });
      }
      return runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await removeSubscriptionItem(ctx, id, itemId, behavior) } }));
    },
  );
}
