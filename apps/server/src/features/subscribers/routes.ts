import {
  apiEraseSubscribersQuery,
  apiEraseSubscribersResponse,
  deleteSubscriberQuery,
  deleteSubscriberResponse,
  idParam,
  publicUnsubscribeBody,
  publicUnsubscribeResponse,
  siteIdParam,
  siteSubscriberParams,
  staleCleanupResponse,
  staleSubscribersResponse,
  subscribeBody,
  subscribeResponse,
  subscriberDataExportResponse,
  subscriberResponse,
  subscribersExportQuery,
  subscribersListQuery,
  subscribersListResponse,
  updateSubscriberTagsBody,
} from '@herald/contracts';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { bearerToken, currentUser, requireUser } from '../../platform/authenticate';
import { retryAfterSeconds, tooManyRequests } from '../../platform/errors';
import { MemoryRateLimiter, type MemoryRateLimit } from '../../platform/memory-rate-limiter';
import { acceptJsonSentAsText, limitPublicRequests, openCorsForPublicRoutes, siteIdOf } from '../../platform/public-routes';
import { ok } from '../../platform/responses';
import { createApiKeysService } from '../api-keys/service';
import { createSubscriberPrivacy, type SubscriberPrivacy } from './privacy';
import { createSubscribersService, type SubscribersService } from './service';

/**
 * Flood limits of the public subscribe/unsubscribe API, counted in this
 * process's memory (see MemoryRateLimiter: with N processes a client gets N
 * times these). A browser calls it a handful of times per visitor; the per-site
 * limit caps what many addresses together can write into one site. Both are
 * settings (SUBSCRIBE_LIMIT_PER_SITE_PER_MINUTE, default 3000, and
 * SUBSCRIBE_LIMIT_PER_ADDRESS_PER_MINUTE, default 60): a site expecting a
 * bigger peak raises them. A browser refused here keeps its subscription and
 * the SDK posts it again later (packages/sdk page/herald.ts, retryLater).
 */
function publicSubscriberLimits(config: AppContext['config']): { perAddress: MemoryRateLimit; perSite: MemoryRateLimit } {
  return {
    perAddress: { limit: config.subscribeLimitPerAddressPerMinute, windowMs: 60_000, maxKeys: 50_000 },
    perSite: { limit: config.subscribeLimitPerSitePerMinute, windowMs: 60_000, maxKeys: 20_000 },
  };
}

/**
 * The v1 erase by external id, per site key, counted in this process's memory:
 * a backend honouring deletion requests makes a few a minute; each erase is a
 * transaction per subscriber, so a runaway loop is stopped well before it
 * loads the database.
 */
export const V1_ERASE_LIMIT: MemoryRateLimit = { limit: 600, windowMs: 60_000, maxKeys: 20_000 };

/** Files of personal data: never kept by a browser or proxy cache. */
const NO_STORE = 'no-store';

/** A subscription is well under 1 KB; the public routes refuse far larger bodies early. */
const PUBLIC_BODY_LIMIT_BYTES = 8 * 1024;

const SUBSCRIBE_PATH = '/public/sites/:siteId/subscribers';
const UNSUBSCRIBE_PATH = '/public/sites/:siteId/subscribers/unsubscribe';

/** Public routes: called cross-origin by the browser SDK on customers' sites (docs/security.md, "Public endpoints"). */
function publicSubscriberRoutes(ctx: AppContext, subscribers: SubscribersService): FastifyPluginAsyncZod {
  return async (app) => {
    openCorsForPublicRoutes(app, [SUBSCRIBE_PATH, UNSUBSCRIBE_PATH]);
    acceptJsonSentAsText(app);
    limitPublicRequests(app, ctx.clock, {
      ...publicSubscriberLimits(ctx.config),
      siteMessage: (seconds) => `Too many subscription requests for this site. Please try again in ${seconds} seconds.`,
    });

    const tags = ['public'];
    const security: Array<Record<string, string[]>> = [];

    app.post(
      SUBSCRIBE_PATH,
      {
        bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
        // Every answer counts, the rate limiter's 429 and the validation's 400 too (herald_subscribe_requests_total).
        onResponse: async (_request, reply) => ctx.metrics.subscribeAnswered(reply.statusCode),
        schema: {
          tags,
          security,
          summary: 'Store a browser push subscription (browser SDK; CORS open)',
          description:
            'Called by the browser SDK with `PushSubscription.toJSON()`. Answers 201 for a new subscriber and 200 when the endpoint was known (keys and last seen refreshed, reactivated if inactive). `previous_endpoint`, sent after `pushsubscriptionchange`, moves that subscriber to the new endpoint keeping its id (and its tags and history). `vapid_public_key` names the site VAPID key the subscription was made with (its `applicationServerKey`, base64url); absent: the site’s primary key; a key the site does not hold (or retired): 400 `unknown_vapid_key`. Every push to the subscriber is signed with that key. p256dh must be an uncompressed P-256 point on the curve, auth 16 bytes, the endpoint https on a known push service. Rate limited per address and per site (429 with Retry-After).',
          params: siteIdParam,
          body: subscribeBody,
          response: { 200: subscribeResponse, 201: subscribeResponse },
        },
      },
      async (request, reply) => {
        const result = await subscribers.subscribe(request.params.siteId, request.body, {
          address: request.ip,
          userAgent: request.headers['user-agent'],
        });
        return reply.status(result.created ? 201 : 200).send(ok({ subscriber: result.subscriber }));
      },
    );

    app.post(
      UNSUBSCRIBE_PATH,
      {
        bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
        schema: {
          tags,
          security,
          summary: 'Mark a subscription inactive by its endpoint (browser SDK; CORS open)',
          description: 'Answers 200 also when the subscriber was already inactive; 404 for an endpoint the site does not know.',
          params: siteIdParam,
          body: publicUnsubscribeBody,
          response: { 200: publicUnsubscribeResponse },
        },
      },
      async (request) => {
        const { id } = await subscribers.unsubscribeByEndpoint(request.params.siteId, request.body.endpoint);
        return ok({ subscriber: { id, is_active: false as const } });
      },
    );
  };
}

/** Spec §7 Subscribers: dashboard routes, scoped to the signed-in user's own sites. */
function dashboardSubscriberRoutes(ctx: AppContext, subscribers: SubscribersService, privacy: SubscriberPrivacy): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['subscribers'];

    app.get(
      '/sites/:siteId/subscribers',
      {
        schema: {
          tags,
          summary: 'List a site’s subscribers, newest first (filter, search, page)',
          params: siteIdParam,
          querystring: subscribersListQuery,
          response: { 200: subscribersListResponse },
        },
      },
      async (request) => ok(await subscribers.list(currentUser(request).id, request.params.siteId, request.query)),
    );

    app.get(
      '/sites/:siteId/subscribers/stale',
      {
        schema: {
          tags,
          summary: 'Stale subscribers: active, but no delivered push for 90+ days (spec §9 best practice)',
          params: siteIdParam,
          response: { 200: staleSubscribersResponse },
        },
      },
      async (request) => ok(await subscribers.staleSubscribers(currentUser(request).id, request.params.siteId)),
    );

    app.post(
      '/sites/:siteId/subscribers/stale/deactivate',
      {
        schema: {
          tags,
          summary: 'Deactivate the stale subscribers; answers the counts before and after',
          params: siteIdParam,
          response: { 200: staleCleanupResponse },
        },
      },
      async (request) => ok(await subscribers.deactivateStaleSubscribers(currentUser(request).id, request.params.siteId)),
    );

    app.get(
      '/sites/:siteId/subscribers/export',
      {
        schema: {
          tags,
          summary: 'The site’s subscribers as CSV, oldest first, with the list’s filters (admin)',
          description:
            'Streamed, RFC 4180, UTF-8 with a byte order mark. Columns: id, then with `include_keys=true` endpoint, p256dh, auth and vapid_public_key (the key the subscriber subscribed with), then created_at (when the browser subscribed), browser, os, country, language, timezone, tags (joined with |), external_id, status (active or inactive): the names the import reads, so a file with keys moves the audience to a server that has those VAPID private keys. Cells a spreadsheet would run as a formula get a leading apostrophe; the base64url keys never do. The export is in the audit log (export_run, with include_keys).',
          params: siteIdParam,
          querystring: subscribersExportQuery,
          produces: ['text/csv'],
        },
      },
      async (request, reply) => {
        const file = await privacy.exportCsv(currentUser(request).id, request.params.siteId, request.query);
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${file.fileName}"`)
          .header('cache-control', NO_STORE)
          .send(Readable.from(file.lines));
      },
    );

    app.get(
      '/sites/:siteId/subscribers/:id',
      { schema: { tags, summary: 'Get one subscriber of a site', params: siteSubscriberParams, response: { 200: subscriberResponse } } },
      async (request) => ok({ subscriber: await subscribers.get(currentUser(request).id, request.params.siteId, request.params.id) }),
    );

    app.delete(
      '/subscribers/:id',
      {
        schema: {
          tags,
          summary: 'Unsubscribe (the subscriber stays, inactive); with erase=true, erase it completely (admin)',
          description:
            'Without `erase` (or `erase=false`) the subscriber is made inactive and answered. With `erase=true` the subscriber is deleted with everything keyed by it: its deliveries, site events, tags, welcome-campaign enrolments, test-device mark and the sends made for it alone; counters and hourly totals keep their figures (a pending delivery counts as skipped, an active subscriber as an unsubscribe). Answers `data.erased` with how many deliveries and events went.',
          params: idParam,
          querystring: deleteSubscriberQuery,
          response: { 200: deleteSubscriberResponse },
        },
      },
      async (request) => {
        const userId = currentUser(request).id;
        if (request.query.erase === true) return ok({ erased: await privacy.eraseAsUser(userId, request.params.id) });
        return ok({ subscriber: await subscribers.remove(userId, request.params.id) });
      },
    );

    app.get(
      '/subscribers/:id/export',
      {
        schema: {
          tags,
          summary: 'Everything Herald holds about one subscriber, as JSON (admin)',
          description:
            'For a data subject’s access request: the stored row (endpoint and keys included, the internal endpoint hash left out), tags, site events, every delivery with its notification and outcome, the sends made for it alone and its welcome campaigns. Sent as a file (`herald-subscriber-<id>.json`); the export is in the audit log.',
          params: idParam,
          response: { 200: subscriberDataExportResponse },
        },
      },
      async (request, reply) => {
        const data = await privacy.exportData(currentUser(request).id, request.params.id);
        return reply.header('content-disposition', `attachment; filename="herald-subscriber-${data.subscriber.id}.json"`).header('cache-control', NO_STORE).send(ok(data));
      },
    );

    app.patch(
      '/subscribers/:id/tags',
      {
        schema: {
          tags,
          summary: 'Replace a subscriber’s tags',
          params: idParam,
          body: updateSubscriberTagsBody,
          response: { 200: subscriberResponse },
        },
      },
      async (request) => ok({ subscriber: await subscribers.replaceTags(currentUser(request).id, request.params.id, request.body.tags) }),
    );
  };
}

/** The site's backend: `Authorization: Bearer <site API key>` (Settings → API Keys), checked before anything is read. */
function v1SubscriberRoutes(ctx: AppContext, privacy: SubscriberPrivacy): FastifyPluginAsyncZod {
  return async (app) => {
    const apiKeys = createApiKeysService(ctx);
    const perSite = new MemoryRateLimiter(V1_ERASE_LIMIT);
    /** The key each request authenticated with: the audit log names it as the actor. */
    const keyIdOf = new WeakMap<FastifyRequest, string>();

    app.addHook('preValidation', async (request: FastifyRequest) => {
      const key = await apiKeys.authenticate(siteIdOf(request) ?? '', bearerToken(request));
      keyIdOf.set(request, key.id);
      const decision = perSite.hit(key.site_id, ctx.clock.now());
      if (!decision.allowed) {
        const seconds = retryAfterSeconds(decision.retryAfterMs);
        throw tooManyRequests(`Too many erase requests for this site. Please try again in ${seconds} seconds.`, seconds);
      }
    });

    app.delete(
      '/v1/sites/:siteId/subscribers',
      {
        schema: {
          tags: ['v1'],
          security: [{ siteApiKey: [] }],
          summary: 'Erase every subscriber with an external id, completely (a person’s deletion request, from your backend)',
          description:
            'Erases every subscriber of the site whose `external_id` (set with `herald.identify()`) is the one given, active or not, as `DELETE /api/subscribers/{id}?erase=true` does, then every site event addressed to that external id. Answers `data.erased`, the number of subscribers erased: 0 when none had it, so a repeated request is harmless. Each erase is in the audit log with the key as the actor. 401 for a missing, unknown or revoked key or a key of another site.',
          params: siteIdParam,
          querystring: apiEraseSubscribersQuery,
          response: { 200: apiEraseSubscribersResponse },
        },
      },
      async (request) => ok({ erased: await privacy.eraseByExternalId(request.params.siteId, request.query.external_id, keyIdOf.get(request)!) }),
    );
  };
}

/** The public subscribe API, the dashboard subscriber API and the v1 erase, each in its own encapsulated scope. */
export function subscribersRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const subscribers = createSubscribersService(ctx);
    const privacy = createSubscriberPrivacy(ctx);
    await app.register(publicSubscriberRoutes(ctx, subscribers));
    await app.register(dashboardSubscriberRoutes(ctx, subscribers, privacy));
    await app.register(v1SubscriberRoutes(ctx, privacy));
  };
}
