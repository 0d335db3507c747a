import { createWebhookBody, createWebhookResponse, deleteWebhookResponse, idParam, siteIdParam, testWebhookResponse, webhookDeliveriesQuery, webhookDeliveriesResponse, webhooksResponse } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createWebhooksService } from './service';

/** Settings → Webhooks: a site's endpoints that receive signed events (docs/product.md, "Webhooks"). */
export function webhooksRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const webhooks = createWebhooksService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['webhooks'];

    app.post(
      '/sites/:siteId/webhooks',
      {
        schema: {
          tags,
          summary: 'Add a webhook (its signing secret is in this answer only)',
          description:
            '`data.webhook.secret` (`whsec_…`) signs every delivery as the Standard Webhooks specification says (headers `webhook-id`, `webhook-timestamp`, `webhook-signature`). It is shown once. Admin or owner.',
          params: siteIdParam,
          body: createWebhookBody,
          response: { 201: createWebhookResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok({ webhook: await webhooks.create(currentUser(request).id, request.params.siteId, request.body) })),
    );

    app.get(
      '/sites/:siteId/webhooks',
      { schema: { tags, summary: 'List a site’s webhooks (never their secrets)', params: siteIdParam, response: { 200: webhooksResponse } } },
      async (request) => ok({ webhooks: await webhooks.list(currentUser(request).id, request.params.siteId) }),
    );

    app.delete(
      '/webhooks/:id',
      { schema: { tags, summary: 'Delete a webhook, its pending events and its delivery log', params: idParam, response: { 200: deleteWebhookResponse } } },
      async (request) => {
        await webhooks.remove(currentUser(request).id, request.params.id);
        return ok({ deleted: true as const });
      },
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        schema: {
          tags,
          summary: 'The delivery log: every attempt, newest first, with the status code the endpoint answered',
          params: idParam,
          querystring: webhookDeliveriesQuery,
          response: { 200: webhookDeliveriesResponse },
        },
      },
      async (request) => ok({ deliveries: await webhooks.deliveries(currentUser(request).id, request.params.id, request.query.limit) }),
    );

    app.post(
      '/webhooks/:id/test',
      { schema: { tags, summary: 'Send a webhook.test event now; answers the attempt', params: idParam, response: { 200: testWebhookResponse } } },
      async (request) => ok({ delivery: await webhooks.sendTest(currentUser(request).id, request.params.id) }),
    );
  };
}
