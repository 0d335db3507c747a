import {
  audienceQuery,
  audienceResponse,
  createSegmentBody,
  idParam,
  segmentDeletedResponse,
  segmentEstimateResponse,
  segmentListResponse,
  segmentResponse,
  siteIdParam,
  updateSegmentBody,
} from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createSegmentsService } from './service';

/** Spec §7 Segments. Every route is scoped to the signed-in user's own sites (another user's segment is a 404). */
export function segmentsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const segments = createSegmentsService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['segments'];

    app.post(
      '/sites/:siteId/segments',
      {
        schema: {
          tags,
          summary: 'Create a segment',
          description:
            'Rules are optional and combine with AND; blank rules are dropped. browser: Chrome, Firefox, Safari or Edge; os: Windows, macOS, Linux, Android or iOS; country: ISO codes or English names, comma-separated, any case (stored as "DE, FR"); subscribed_days_ago N: subscribed at least N days ago; tags: the subscriber has every tag. Names are unique per site (409).',
          params: siteIdParam,
          body: createSegmentBody,
          response: { 201: segmentResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok({ segment: await segments.create(currentUser(request).id, request.params.siteId, request.body) })),
    );

    app.get(
      '/sites/:siteId/segments',
      { schema: { tags, summary: 'List a site’s segments with their current counts', params: siteIdParam, response: { 200: segmentListResponse } } },
      async (request) => ok({ segments: await segments.list(currentUser(request).id, request.params.siteId) }),
    );

    app.get(
      '/sites/:siteId/audience',
      {
        schema: {
          tags,
          summary: 'How many active subscribers a send would reach now: all of them, or a segment’s (segment_id)',
          params: siteIdParam,
          querystring: audienceQuery,
          response: { 200: audienceResponse },
        },
      },
      async (request) => ok(await segments.audience(currentUser(request).id, request.params.siteId, request.query.segment_id)),
    );

    app.get('/segments/:id', { schema: { tags, summary: 'Get a segment with its current count', params: idParam, response: { 200: segmentResponse } } }, async (request) =>
      ok({ segment: await segments.get(currentUser(request).id, request.params.id) }),
    );

    app.patch(
      '/segments/:id',
      {
        schema: {
          tags,
          summary: 'Rename a segment or replace its rules',
          description: '`rules`, when sent, replaces the whole rule set. Sends not yet under way use the new rules.',
          params: idParam,
          body: updateSegmentBody,
          response: { 200: segmentResponse },
        },
      },
      async (request) => ok({ segment: await segments.update(currentUser(request).id, request.params.id, request.body) }),
    );

    app.delete(
      '/segments/:id',
      {
        schema: {
          tags,
          summary: 'Delete a segment nothing sends to any more',
          description: '409, naming them, while notifications, campaign steps, feeds or queued sends still target the segment.',
          params: idParam,
          response: { 200: segmentDeletedResponse },
        },
      },
      async (request) => {
        await segments.remove(currentUser(request).id, request.params.id);
        return ok({ deleted: true as const });
      },
    );

    app.post(
      '/segments/:id/estimate',
      { schema: { tags, summary: 'Count the active subscribers matching the segment now', params: idParam, response: { 200: segmentEstimateResponse } } },
      async (request) => ok(await segments.estimate(currentUser(request).id, request.params.id)),
    );
  };
}
