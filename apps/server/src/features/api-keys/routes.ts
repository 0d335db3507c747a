import { apiKeysResponse, createApiKeyBody, createApiKeyResponse, idParam, revokeApiKeyResponse, siteIdParam } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createApiKeysService } from './service';

/**
 * The OpenAPI security scheme of the v1 API: a site API key, not a dashboard
 * session (app.ts lists it under components.securitySchemes).
 */
export const SITE_API_KEY_SECURITY_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'hk_…',
  description: 'A site API key created in Settings → API Keys (`Authorization: Bearer hk_…`). It works only for the site it was created for.',
} as const;

/** Settings → API Keys: keys a site's backend uses for the v1 API. */
export function apiKeysRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const apiKeys = createApiKeysService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['api-keys'];

    app.post(
      '/sites/:siteId/api-keys',
      {
        schema: {
          tags,
          summary: 'Create a site API key (the key is in this answer only)',
          description: '`data.key` is shown once: Herald keeps only its hash. Lists show `prefix`, its first characters.',
          params: siteIdParam,
          body: createApiKeyBody,
          response: { 201: createApiKeyResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok(await apiKeys.create(currentUser(request).id, request.params.siteId, request.body.name))),
    );

    app.get(
      '/sites/:siteId/api-keys',
      { schema: { tags, summary: 'List a site’s API keys (never the keys themselves)', params: siteIdParam, response: { 200: apiKeysResponse } } },
      async (request) => ok({ api_keys: await apiKeys.list(currentUser(request).id, request.params.siteId) }),
    );

    app.delete(
      '/api-keys/:id',
      {
        schema: {
          tags,
          summary: 'Revoke an API key',
          description: 'Calls with a revoked key answer 401 "This API key has been revoked".',
          params: idParam,
          response: { 200: revokeApiKeyResponse },
        },
      },
      async (request) => {
        await apiKeys.revoke(currentUser(request).id, request.params.id);
        return ok({ revoked: true as const });
      },
    );
  };
}
