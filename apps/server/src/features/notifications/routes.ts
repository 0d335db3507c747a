import {
  envelope,
  idParam,
  notificationBody,
  notificationListQuery,
  notificationListResponse,
  notificationPatchBody,
  notificationResponse,
  performanceResponse,
  siteIdParam,
} from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createNotificationsService } from './service';

/** Spec §7 Notifications, plus cancel, duplicate and retry from the §4 state machine. */
export function notificationsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const notifications = createNotificationsService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['notifications'];

    app.post(
      '/sites/:siteId/notifications',
      { schema: { tags, summary: 'Create a notification (draft, or scheduled when scheduled_at is set)', params: siteIdParam, body: notificationBody, response: { 201: notificationResponse } } },
      async (request, reply) => reply.status(201).send(ok({ notification: await notifications.create(currentUser(request).id, request.params.siteId, request.body) })),
    );

    app.get(
      '/sites/:siteId/notifications',
      { schema: { tags, summary: 'List notifications, optionally by status or type', params: siteIdParam, querystring: notificationListQuery, response: { 200: notificationListResponse } } },
      async (request) => ok(await notifications.list(currentUser(request).id, request.params.siteId, request.query)),
    );

    app.get('/notifications/:id', { schema: { tags, summary: 'Get a notification', params: idParam, response: { 200: notificationResponse } } }, async (request) =>
      ok({ notification: await notifications.get(currentUser(request).id, request.params.id) }),
    );

    app.patch(
      '/notifications/:id',
      { schema: { tags, summary: 'Edit a draft or scheduled notification', params: idParam, body: notificationPatchBody, response: { 200: notificationResponse } } },
      async (request) => ok({ notification: await notifications.update(currentUser(request).id, request.params.id, request.body) }),
    );

    app.delete(
      '/notifications/:id',
      { schema: { tags, summary: 'Delete a draft or scheduled notification', params: idParam, response: { 200: envelope(z.object({ deleted: z.literal(true) })) } } },
      async (request) => {
        await notifications.remove(currentUser(request).id, request.params.id);
        return ok({ deleted: true as const });
      },
    );

    app.post('/notifications/:id/send', { schema: { tags, summary: 'Send a draft now', params: idParam, response: { 200: notificationResponse } } }, async (request) =>
      ok({ notification: await notifications.sendNow(currentUser(request).id, request.params.id) }),
    );

    app.post(
      '/notifications/:id/cancel',
      { schema: { tags, summary: 'Cancel a scheduled notification before it is sent', params: idParam, response: { 200: notificationResponse } } },
      async (request) => ok({ notification: await notifications.cancel(currentUser(request).id, request.params.id) }),
    );

    app.post(
      '/notifications/:id/duplicate',
      { schema: { tags, summary: 'Copy a notification into a new draft', params: idParam, response: { 201: notificationResponse } } },
      async (request, reply) => reply.status(201).send(ok({ notification: await notifications.duplicate(currentUser(request).id, request.params.id) })),
    );

    app.post(
      '/notifications/:id/retry',
      { schema: { tags, summary: 'Send the failed deliveries of a failed notification again', params: idParam, response: { 200: notificationResponse } } },
      async (request) => ok({ notification: await notifications.retry(currentUser(request).id, request.params.id) }),
    );

    app.get(
      '/notifications/:id/performance',
      { schema: { tags: ['analytics'], summary: 'Sent, delivered, clicked, failed, click and delivery rates', params: idParam, response: { 200: performanceResponse } } },
      async (request) => ok(await notifications.performance(currentUser(request).id, request.params.id)),
    );
  };
}
