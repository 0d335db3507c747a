import {
  dashboardQuery,
  dashboardResponse,
  deliveryHealthQuery,
  deliveryHealthResponse,
  engagementQuery,
  engagementResponse,
  siteIdParam,
  subscriberGrowthQuery,
  subscriberGrowthResponse,
} from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createAnalyticsService } from './service';

/** Spec §7 Analytics (the per-notification performance route lives with notifications). */
export function analyticsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const analytics = createAnalyticsService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['analytics'];

    app.get(
      '/sites/:siteId/analytics/dashboard',
      {
        schema: {
          tags,
          summary: 'Dashboard figures for the last `days` local days (default 7) against the previous period of the same length',
          params: siteIdParam,
          querystring: dashboardQuery,
          response: { 200: dashboardResponse },
        },
      },
      async (request) => ok(await analytics.dashboard(currentUser(request).id, request.params.siteId, request.query)),
    );

    app.get(
      '/sites/:siteId/analytics/delivery',
      {
        schema: {
          tags,
          summary: 'Delivery health for the last `days` local days (default 7): per push service accepted, failed by reason, expired, median time to accept; subscriptions gained and lost per day',
          params: siteIdParam,
          querystring: deliveryHealthQuery,
          response: { 200: deliveryHealthResponse },
        },
      },
      async (request) => ok(await analytics.deliveryHealth(currentUser(request).id, request.params.siteId, request.query)),
    );

    app.get(
      '/sites/:siteId/analytics/subscribers',
      {
        schema: {
          tags,
          summary: 'Subscriber growth per local day or week: new, unsubscribed, net and active',
          params: siteIdParam,
          querystring: subscriberGrowthQuery,
          response: { 200: subscriberGrowthResponse },
        },
      },
      async (request) => ok(await analytics.subscriberGrowth(currentUser(request).id, request.params.siteId, request.query)),
    );

    app.get(
      '/sites/:siteId/analytics/engagement',
      {
        schema: {
          tags,
          summary: 'Sent, delivered, clicked and failed pushes with click and delivery rates, in total and per local day',
          params: siteIdParam,
          querystring: engagementQuery,
          response: { 200: engagementResponse },
        },
      },
      async (request) => ok(await analytics.engagement(currentUser(request).id, request.params.siteId, request.query)),
    );
  };
}
