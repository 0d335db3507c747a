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
import { Readable } from 'node:stream';
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
      {
        schema: {
          tags,
          summary: 'Create a notification (draft, or scheduled when scheduled_at is set)',
          description: [
            'ONE_TIME: a draft, or `scheduled` with `scheduled_at`.',
            'RECURRING: `scheduled` with `recurring_schedule {interval_type, interval_value, start_date, end_date?, is_active?}`. Dates without an offset are wall times in the site’s timezone; occurrence k is start + k × interval in that local time (MONTHLY from the 31st falls on the last day of shorter months). Each occurrence is its own run (see /performance). A start in the past begins with the first occurrence from now on. After `end_date` the notification is `completed`. If the scheduler was down, only the latest missed occurrence is sent.',
            'TRIGGERED: `scheduled` (armed) with `trigger {event, delay_minutes}`: each event with that name about a subscriber (browser `herald.track` or POST /api/v1/sites/{siteId}/events) sends it to that subscriber after the delay.',
          ].join('\n\n'),
          params: siteIdParam,
          body: notificationBody,
          response: { 201: notificationResponse },
        },
      },
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
      {
        schema: {
          tags,
          summary: 'Edit a draft or scheduled notification',
          description: [
            'Changes only the fields sent. Recurring and triggered notifications take changes from their next send; a recurring notification’s content cannot change while one of its occurrences is being sent (409).',
            'Pause a recurring notification with `{ "recurring_schedule": { "is_active": false } }` and resume it with `{ "recurring_schedule": { "is_active": true } }` (it stays `scheduled`; `recurringSchedule.isActive` shows the state). Occurrences that fall while paused are not sent. A `recurring_schedule` sent without `is_active` keeps the current state. New timing starts from the next occurrence after now and never repeats one already sent.',
          ].join('\n\n'),
          params: idParam,
          body: notificationPatchBody,
          response: { 200: notificationResponse },
        },
      },
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
      {
        schema: {
          tags,
          summary: 'Cancel a scheduled notification before it is sent',
          description: 'Recurring: stops the schedule for good (an occurrence being sent finishes). Triggered: disarms it and cancels sends still waiting for their delay.',
          params: idParam,
          response: { 200: notificationResponse },
        },
      },
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
      '/notifications/:id/report.csv',
      {
        schema: {
          tags: ['analytics'],
          summary: 'The notification’s report as CSV: one line per delivery (outcome, reason, push service, times)',
          description:
            'Streamed. Columns: run_due_at, subscriber_id, browser, os, country, push_service, outcome (sent, failed, expired, skipped, pending), reason, error, attempts, next_attempt_at, sent_at, delivered_at, clicked_at. Cells that a spreadsheet would read as a formula are prefixed with an apostrophe.',
          params: idParam,
          produces: ['text/csv'],
        },
      },
      async (request, reply) => {
        const report = await notifications.reportCsv(currentUser(request).id, request.params.id);
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${report.fileName}"`)
          .send(Readable.from(report.lines));
      },
    );

    app.get(
      '/notifications/:id/performance',
      {
        schema: {
          tags: ['analytics'],
          summary: 'The notification’s outcome: counts, failures by reason and push service, retries under way, rates and runs',
          params: idParam,
          response: { 200: performanceResponse },
        },
      },
      async (request) => ok(await notifications.performance(currentUser(request).id, request.params.id)),
    );
  };
}
