import { beaconBody, beaconResponse } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { openCorsForPublicRoutes } from '../../platform/public-routes';
import { ok } from '../../platform/responses';
import { createTrackingService } from './service';

/** POST /api/public/events: the service worker's delivered/clicked beacons (CORS open, token-authenticated). */
export function trackingRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const tracking = createTrackingService(ctx);
    openCorsForPublicRoutes(app, ['/public/events']);
    app.post(
      '/public/events',
      {
        onResponse: async (_request, reply) => ctx.metrics.beaconAnswered(reply.statusCode),
        schema: {
          tags: ['public'],
          summary: 'Report that a notification was delivered or clicked (called by the service worker)',
          security: [],
          body: beaconBody,
          response: { 200: beaconResponse },
        },
      },
      async (request) => ok(await tracking.record(request.body.type, request.body.token)),
    );
  };
}
