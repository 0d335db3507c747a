import {
  IDEMPOTENCY_KEY_HEADER,
  apiEventBody,
  apiEventHeaders,
  apiSubscriberTagsBody,
  apiSubscriberTagsResponse,
  eventReceiptResponse,
  identifyResponse,
  publicIdentifyBody,
  publicTagsBody,
  publicTrackBody,
  siteEventsQuery,
  siteEventsResponse,
  siteIdParam,
  tagsResponse,
} from '@herald/contracts';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { bearerToken, currentUser, requireUser } from '../../platform/authenticate';
import { badRequest, retryAfterSeconds, tooManyRequests } from '../../platform/errors';
import { MemoryRateLimiter, type MemoryRateLimit } from '../../platform/memory-rate-limiter';
import { acceptJsonSentAsText, limitPublicRequests, openCorsForPublicRoutes, siteIdOf } from '../../platform/public-routes';
import { ok } from '../../platform/responses';
import { createApiKeysService } from '../api-keys/service';
import { createSiteEventsService, type SiteEventsService } from './service';

/**
 * Flood limits, counted in this process's memory (see MemoryRateLimiter). A
 * visitor's browser sends a few events per page; a site's backend sends from
 * a few addresses, so its limit is per site key rather than per address.
 */
export const SITE_EVENT_LIMITS: { browserPerAddress: MemoryRateLimit; browserPerSite: MemoryRateLimit; apiPerSite: MemoryRateLimit } = {
  browserPerAddress: { limit: 120, windowMs: 60_000, maxKeys: 50_000 },
  browserPerSite: { limit: 6_000, windowMs: 60_000, maxKeys: 20_000 },
  apiPerSite: { limit: 6_000, windowMs: 60_000, maxKeys: 20_000 },
};

/** An event with its 4 KB of data and a 2 KB endpoint fits well within this. */
const EVENT_BODY_LIMIT_BYTES = 16 * 1024;

const TRACK_PATH = '/public/sites/:siteId/track';
const IDENTIFY_PATH = '/public/sites/:siteId/identify';
const TAGS_PATH = '/public/sites/:siteId/tags';

/** The browser SDK's calls (packages/sdk: herald.track / identify / addTags / removeTags): CORS open, keyed by push endpoint. */
function publicSiteEventRoutes(ctx: AppContext, events: SiteEventsService): FastifyPluginAsyncZod {
  return async (app) => {
    openCorsForPublicRoutes(app, [TRACK_PATH, IDENTIFY_PATH, TAGS_PATH]);
    acceptJsonSentAsText(app);
    limitPublicRequests(app, ctx.clock, {
      perAddress: SITE_EVENT_LIMITS.browserPerAddress,
      perSite: SITE_EVENT_LIMITS.browserPerSite,
      siteMessage: (seconds) => `Too many requests for this site. Please try again in ${seconds} seconds.`,
    });

    const tags = ['public'];
    const security: Array<Record<string, string[]>> = [];
    const endpointNote = '`endpoint` is this browser’s push endpoint; it must be an active subscriber of the site, else 404.';

    app.post(
      TRACK_PATH,
      {
        bodyLimit: EVENT_BODY_LIMIT_BYTES,
        schema: {
          tags,
          security,
          summary: 'Record an event about this browser’s subscriber (herald.track; CORS open)',
          description: `${endpointNote} Fires every armed TRIGGERED notification of the site listening for \`event\`, for this subscriber, after its delay. The same \`idempotency_key\` twice for the same event name is one event (\`duplicate: true\`).`,
          params: siteIdParam,
          body: publicTrackBody,
          response: { 202: eventReceiptResponse },
        },
      },
      async (request, reply) => reply.status(202).send(ok({ event: await events.trackFromBrowser(request.params.siteId, request.body) })),
    );

    app.post(
      IDENTIFY_PATH,
      {
        bodyLimit: EVENT_BODY_LIMIT_BYTES,
        schema: {
          tags,
          security,
          summary: 'Attach your own user id to this browser’s subscriber (herald.identify; CORS open)',
          description: `${endpointNote} The v1 events API can then address the subscriber by \`external_id\`. \`identity_hash\` is HMAC-SHA256(site identity secret, external_id) as lowercase hex, computed by your backend (\`GET /api/sites/{id}/identity-secret\`). When the site verifies identities (\`settings.identityVerification\`, on for new sites) a call without it answers 401 and one with a wrong hash 403; a given hash is always checked. On such a site only signed claims are addressed by \`external_id\`.`,
          params: siteIdParam,
          body: publicIdentifyBody,
          response: { 200: identifyResponse },
        },
      },
      async (request) => ok({ subscriber: await events.identify(request.params.siteId, request.body) }),
    );

    app.post(
      TAGS_PATH,
      {
        bodyLimit: EVENT_BODY_LIMIT_BYTES,
        schema: {
          tags,
          security,
          summary: 'Add or remove tags of this browser’s subscriber (herald.addTags / removeTags; CORS open)',
          description: `${endpointNote} Removals apply first, then additions; a subscriber has at most 50 tags. Tags the site lists in \`settings.serverOnlyTags\` are refused (403): set them with \`POST /api/v1/sites/{siteId}/subscribers/tags\`.`,
          params: siteIdParam,
          body: publicTagsBody,
          response: { 200: tagsResponse },
        },
      },
      async (request) => ok({ subscriber: await events.changeTags(request.params.siteId, request.body) }),
    );
  };
}

/**
 * The event's idempotency key: the body's `idempotency_key` or the
 * `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header), both
 * already trimmed by their schemas. Both given must say the same: a client
 * sending two different keys has a bug, and guessing which one it meant could
 * send twice or drop an event.
 */
function idempotencyKeyOf(fromBody: string | undefined, fromHeader: string | undefined): string | undefined {
  if (fromBody !== undefined && fromHeader !== undefined && fromBody !== fromHeader) {
    throw badRequest(`The ${IDEMPOTENCY_KEY_HEADER} header and idempotency_key in the body differ: send one of them, or the same key in both`, 'idempotency_key_mismatch');
  }
  return fromBody ?? fromHeader;
}

/** The site's backend: `Authorization: Bearer <site API key>` (Settings → API Keys). */
function v1SiteEventRoutes(ctx: AppContext, events: SiteEventsService): FastifyPluginAsyncZod {
  return async (app) => {
    const apiKeys = createApiKeysService(ctx);
    const perSite = new MemoryRateLimiter(SITE_EVENT_LIMITS.apiPerSite);
    /** The key each request authenticated with: the audit log names it as the actor. */
    const keyIdOf = new WeakMap<FastifyRequest, string>();

    // The key is checked before the body, so a caller without a valid key learns nothing from validation errors.
    app.addHook('preValidation', async (request: FastifyRequest) => {
      const siteId = siteIdOf(request) ?? '';
      const key = await apiKeys.authenticate(siteId, bearerToken(request));
      keyIdOf.set(request, key.id);
      const decision = perSite.hit(key.site_id, ctx.clock.now());
      if (!decision.allowed) {
        const seconds = retryAfterSeconds(decision.retryAfterMs);
        throw tooManyRequests(`Too many events for this site. Please try again in ${seconds} seconds.`, seconds);
      }
    });

    app.post(
      '/v1/sites/:siteId/events',
      {
        bodyLimit: EVENT_BODY_LIMIT_BYTES,
        schema: {
          tags: ['v1'],
          security: [{ siteApiKey: [] }],
          summary: 'Send an event about a subscriber from your backend',
          description:
            'Address one subscriber by `subscriber_id`, or a person by `external_id` (set in the browser with `herald.identify()`; every active subscriber with it). Fires every armed TRIGGERED notification of the site listening for `event`, after its delay. The same idempotency key for the same event name and the same subscriber or external id is one event (`duplicate: true`): send it as `idempotency_key` in the body or as the `Idempotency-Key` header (the IETF draft’s name); both given and different answer 400. 401 for a missing, unknown or revoked key or a key of another site; 404 for a `subscriber_id` that is not an active subscriber of the site.',
          params: siteIdParam,
          headers: apiEventHeaders,
          body: apiEventBody,
          response: { 202: eventReceiptResponse },
        },
      },
      async (request, reply) => {
        const body = { ...request.body, idempotency_key: idempotencyKeyOf(request.body.idempotency_key, request.headers['idempotency-key']) };
        return reply.status(202).send(ok({ event: await events.receiveFromApi(request.params.siteId, body) }));
      },
    );

    app.post(
      '/v1/sites/:siteId/subscribers/tags',
      {
        bodyLimit: EVENT_BODY_LIMIT_BYTES,
        schema: {
          tags: ['v1'],
          security: [{ siteApiKey: [] }],
          summary: 'Add or remove tags of a subscriber from your backend (server-only tags too)',
          description:
            'Address one subscriber by `subscriber_id`, or a person by `external_id` (every active subscriber with it; on a site that verifies identities, only those whose claim was signed). Removals apply first, then additions; a subscriber has at most 50 tags (400, nothing changed). This is how tags the site lists in `settings.serverOnlyTags` are set. 401 for a missing, unknown or revoked key or a key of another site; 404 for a `subscriber_id` that is not an active subscriber of the site.',
          params: siteIdParam,
          body: apiSubscriberTagsBody,
          response: { 200: apiSubscriberTagsResponse },
        },
      },
      async (request) => ok({ subscribers: await events.changeTagsFromApi(request.params.siteId, request.body, keyIdOf.get(request)!) }),
    );
  };
}

/** Settings → Automation: what arrived lately. */
function dashboardSiteEventRoutes(ctx: AppContext, events: SiteEventsService): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', requireUser(ctx));
    app.get(
      '/sites/:siteId/events',
      {
        schema: {
          tags: ['site-events'],
          summary: 'The site’s recent events (from the SDK and the v1 API), newest first',
          params: siteIdParam,
          querystring: siteEventsQuery,
          response: { 200: siteEventsResponse },
        },
      },
      async (request) => ok({ events: await events.listRecent(currentUser(request).id, request.params.siteId, request.query.limit) }),
    );
  };
}

export function siteEventsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const events = createSiteEventsService(ctx);
    await app.register(publicSiteEventRoutes(ctx, events));
    await app.register(v1SiteEventRoutes(ctx, events));
    await app.register(dashboardSiteEventRoutes(ctx, events));
  };
}
