import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { AppContext } from './context';
import { apiRoutes } from './features';
import { SITE_API_KEY_SECURITY_SCHEME } from './features/api-keys/routes';
import { uploadedFilesRoutes } from './features/uploads/routes';
import { registerErrorHandler, sendFrameworkError } from './platform/error-handler';
import { registerHealthRoutes, type ReadinessCheck } from './platform/health';
import { registerNulCharacterGuard } from './platform/nul-characters';
import { requestContextHook } from './platform/request-context';
import { DASHBOARD_CSP, defaultStaticDirs, registerStaticFiles, type StaticDirs } from './platform/static-files';
import { databaseReadiness } from './runtime';

export interface BuildAppOptions {
  /** Built dashboard and SDK folders; defaults to the monorepo's dist folders. */
  staticDirs?: StaticDirs;
  /** What GET /readyz checks; by default the database and its migrations (roles.ts adds the engine's). */
  readiness?: ReadinessCheck[];
}

/** Whether an answer to this URL must not be stored by any cache: everything under /api except the public SDK routes. */
export function isPrivateApiUrl(url: string): boolean {
  const path = url.split('?')[0]!;
  return (path === '/api' || path.startsWith('/api/')) && !path.startsWith('/api/public/');
}

/** Builds the HTTP app: API under /api, OpenAPI at /api/docs, the dashboard and SDK. */
export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log,
    // TRUST_PROXY trusts exactly one hop, the peer that connected (our own
    // proxy): the client is the address it appended to X-Forwarded-For, the
    // header's last entry. Trusting every hop (`true`) would take the first
    // entry, which the client writes itself, so any client could pick its
    // address and reset the per-address limits. (Fastify's numeric hop count
    // trusts nothing, hence the function: proxy-addr numbers the socket 0.)
    trustProxy: ctx.config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    bodyLimit: 1024 * 1024,
    // A slow client must not hold a socket forever.
    requestTimeout: 30_000,
    // Dashboard API calls are logged; the browser SDK's public calls (one per
    // subscriber, per push) and static files would drown everything else.
    logController: new LogController({
      disableRequestLogging: (request: { url?: string }) => !request.url?.startsWith('/api/') || request.url.startsWith('/api/public/'),
    }),
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: sendFrameworkError,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);
  registerNulCharacterGuard(app);
  app.addHook('onRequest', requestContextHook);

  app.addHook('onSend', async (request, reply, payload) => {
    // Dashboard and server-to-server API answers carry tokens and personal
    // data: no browser, proxy or CDN may keep a copy. Only the public SDK
    // calls (/api/public/**, CORS-open, nothing secret) are left alone
    // (docs/security.md, "Cached answers").
    if (isPrivateApiUrl(request.url)) reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'strict-origin-when-cross-origin');
    if (!request.url.startsWith('/api/docs')) {
      reply.header('x-frame-options', 'DENY');
      reply.header('content-security-policy', DASHBOARD_CSP);
    }
    return payload;
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald API',
        version: '1.0.0',
        description:
          'Self-hosted web push. Dashboard routes need `Authorization: Bearer <token>` from POST /api/auth/login. Public routes are called by the browser SDK on customer sites.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, siteApiKey: SITE_API_KEY_SECURITY_SCHEME } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  // The interactive docs get a policy of their own (Swagger UI styles inline;
  // no upgrade-insecure-requests, which would break a plain-http install).
  await app.register(fastifySwaggerUi, {
    routePrefix: '/api/docs',
    staticCSP: "default-src 'self'; base-uri 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'self'",
  });

  await app.register(
    async (api) => {
      for (const routes of apiRoutes) await api.register(routes(ctx));
    },
    { prefix: '/api' },
  );

  registerHealthRoutes(app, {
    readiness: options.readiness ?? databaseReadiness(ctx),
    metrics: ctx.metrics,
    // On the public port, metrics exist only behind a token (README, "Metrics").
    exposeMetrics: ctx.config.metricsToken !== undefined,
    metricsToken: ctx.config.metricsToken,
  });

  // Uploaded images live outside /api: browsers load them into notifications.
  await app.register(uploadedFilesRoutes(ctx));
  await registerStaticFiles(app, options.staticDirs ?? defaultStaticDirs());
  return app;
}
