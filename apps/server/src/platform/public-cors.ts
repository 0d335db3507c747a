import type { FastifyBaseLogger, FastifyInstance, FastifyTypeProvider, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';

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
  app: FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, Provider>,
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
