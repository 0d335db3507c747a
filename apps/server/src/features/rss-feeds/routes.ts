import {
  createRssFeedBody,
  idParam,
  rssFeedCheckResponse,
  rssFeedDeletedResponse,
  rssFeedListResponse,
  rssFeedResponse,
  siteIdParam,
  updateRssFeedBody,
} from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createRssFeedsService } from './service';

/** Spec §7 RSS feeds, plus "Check now". */
export function rssFeedsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const feeds = createRssFeedsService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['rss-feeds'];

    app.post(
      '/sites/:siteId/rss-feeds',
      {
        schema: {
          tags,
          summary: 'Add an RSS feed; its first check records the items it already lists',
          description: "At most RSS_FEEDS_PER_USER feeds (default 50) over all of the caller's sites; one more answers 409.",
          params: siteIdParam,
          body: createRssFeedBody,
          response: { 201: rssFeedResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok({ feed: await feeds.create(currentUser(request).id, request.params.siteId, request.body) })),
    );

    app.get(
      '/sites/:siteId/rss-feeds',
      { schema: { tags, summary: "List a site's RSS feeds", params: siteIdParam, response: { 200: rssFeedListResponse } } },
      async (request) => ok({ feeds: await feeds.list(currentUser(request).id, request.params.siteId) }),
    );

    app.get('/rss-feeds/:id', { schema: { tags, summary: 'Get an RSS feed', params: idParam, response: { 200: rssFeedResponse } } }, async (request) =>
      ok({ feed: await feeds.get(currentUser(request).id, request.params.id) }),
    );

    app.patch(
      '/rss-feeds/:id',
      { schema: { tags, summary: 'Edit an RSS feed, or pause/activate it with { is_active }', params: idParam, body: updateRssFeedBody, response: { 200: rssFeedResponse } } },
      async (request) => ok({ feed: await feeds.update(currentUser(request).id, request.params.id, request.body) }),
    );

    app.delete('/rss-feeds/:id', { schema: { tags, summary: 'Delete an RSS feed', params: idParam, response: { 200: rssFeedDeletedResponse } } }, async (request) => {
      await feeds.remove(currentUser(request).id, request.params.id);
      return ok({ deleted: true as const });
    });

    app.post(
      '/rss-feeds/:id/check',
      {
        schema: {
          tags,
          summary: 'Check the feed now and report what happened',
          description: 'Once a minute per feed and RSS_CHECKS_PER_USER_PER_HOUR (default 30) per user; beyond that 429 with Retry-After.',
          params: idParam,
          response: { 200: rssFeedCheckResponse },
        },
      },
      async (request) => ok(await feeds.checkNow(currentUser(request).id, request.params.id)),
    );
  };
}
