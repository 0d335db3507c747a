import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { rateLimitKeyOfAddress } from './client-address';
import type { Clock } from './clock';
import { retryAfterSeconds, tooManyRequests } from './errors';
import { MemoryRateLimiter, type MemoryRateLimit } from './memory-rate-limiter';

type App<Provider extends FastifyTypeProvider> = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, Provider>;

// Public endpoints are called with fetch() from customers' pages on any
// origin. They carry no credentials and answer nothing secret, so any origin
// may read the answer (docs/security.md, "Public endpoints"). The dashboard API
// never gets these headers: it does not reflect origins.

const PREFLIGHT_MAX_AGE_SECONDS = 86_400;

/**
 * Adds `Access-Control-Allow-Origin: *` to every answer of the routes in this
 * (encapsulated) plugin, errors included, so the SDK can read error.message,
 * and answers the CORS preflight for each of `paths`.
 */
export function openCorsForPublicRoutes<Provider extends FastifyTypeProvider>(
  app: App<Provider>,
  paths: string[],
  methods: string[] = ['POST'],
): void {
  app.addHook('onRequest', async (_request, reply) => {
    void reply.header('access-control-allow-origin', '*');
  });
  for (const path of paths) {
    app.options(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .status(204)
        .header('access-control-allow-methods', [...methods, 'OPTIONS'].join(', '))
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
        .send(),
    );
  }
}

/** The SDK may send JSON as text/plain: a CORS "simple" request needs no preflight. */
export function acceptJsonSentAsText<Provider extends FastifyTypeProvider>(app: App<Provider>): void {
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
}

export interface PublicRequestLimits {
  perAddress: MemoryRateLimit;
  perSite: MemoryRateLimit;
  /** The 429 message when a site's limit is reached, given the seconds to wait. */
  siteMessage: (seconds: number) => string;
}

/** The `:siteId` path parameter of a request, when it has one. */
export function siteIdOf(request: FastifyRequest): string | undefined {
  const siteId = (request.params as { siteId?: unknown }).siteId;
  return typeof siteId === 'string' ? siteId : undefined;
}

/**
 * Flood limits for the plugin's public routes, per client address and per
 * site, counted in this process's memory (see MemoryRateLimiter) before the
 * body is read or the database is touched, so junk costs as much as real calls.
 * A refused call gets 429 with Retry-After; the SDK tries again later.
 */
export function limitPublicRequests<Provider extends FastifyTypeProvider>(app: App<Provider>, clock: Clock, limits: PublicRequestLimits): void {
  const perAddress = new MemoryRateLimiter(limits.perAddress);
  const perSite = new MemoryRateLimiter(limits.perSite);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.method === 'OPTIONS') return;
    const now = clock.now();
    const byAddress = perAddress.hit(rateLimitKeyOfAddress(request.ip), now);
    if (!byAddress.allowed) {
      const seconds = retryAfterSeconds(byAddress.retryAfterMs);
      throw tooManyRequests(`Too many requests from your address. Please try again in ${seconds} seconds.`, seconds);
    }
    const siteId = siteIdOf(request);
    if (!siteId) return;
    const bySite = perSite.hit(siteId, now);
    if (!bySite.allowed) {
      const seconds = retryAfterSeconds(bySite.retryAfterMs);
      throw tooManyRequests(limits.siteMessage(seconds), seconds);
    }
  });
}
