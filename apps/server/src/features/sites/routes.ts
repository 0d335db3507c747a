import { createSiteBody, envelope, idParam, identitySecretResponse, installCodeResponse, siteResponse, sitesResponse, updateSiteBody } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createSitesService } from './service';

/** Spec §7 Sites. Every route is scoped to the signed-in user's own sites. */
export function sitesRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const sites = createSitesService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['sites'];

    app.post('/sites', { schema: { tags, summary: 'Create a site (generates its VAPID keys)', body: createSiteBody, response: { 201: siteResponse } } }, async (request, reply) =>
      reply.status(201).send(ok({ site: await sites.create(currentUser(request).id, request.body) })),
    );

    app.get('/sites', { schema: { tags, summary: 'List your sites', response: { 200: sitesResponse } } }, async (request) =>
      ok({ sites: await sites.list(currentUser(request).id) }),
    );

    app.get('/sites/:id', { schema: { tags, summary: 'Get a site', params: idParam, response: { 200: siteResponse } } }, async (request) =>
      ok({ site: await sites.get(currentUser(request).id, request.params.id) }),
    );

    app.patch(
      '/sites/:id',
      { schema: { tags, summary: 'Update name, URL and settings', params: idParam, body: updateSiteBody, response: { 200: siteResponse } } },
      async (request) => ok({ site: await sites.update(currentUser(request).id, request.params.id, request.body) }),
    );

    app.delete(
      '/sites/:id',
      { schema: { tags, summary: 'Delete a site and everything in it', params: idParam, response: { 200: envelope(z.object({ deleted: z.literal(true) })) } } },
      async (request) => {
        await sites.remove(currentUser(request).id, request.params.id);
        return ok({ deleted: true as const });
      },
    );

    const identityNote =
      'The key of the HMAC-SHA256 your backend computes over a user id (lowercase hex) so `herald.identify(id, hash)` is accepted (docs/security.md, "Identity verification"). Keep it on your server. Owner only; another user’s site answers 404.';

    app.get(
      '/sites/:id/identity-secret',
      { schema: { tags, summary: 'The site’s identity secret', description: identityNote, params: idParam, response: { 200: identitySecretResponse } } },
      async (request, reply) => {
        const secret = await sites.identitySecret(currentUser(request).id, request.params.id);
        return reply.header('cache-control', 'no-store').send(ok(secret));
      },
    );

    app.post(
      '/sites/:id/identity-secret/rotate',
      {
        schema: {
          tags,
          summary: 'Replace the site’s identity secret (hashes made with the old one are refused from now on)',
          description: identityNote,
          params: idParam,
          response: { 200: identitySecretResponse },
        },
      },
      async (request, reply) => {
        const secret = await sites.rotateIdentitySecret(currentUser(request).id, request.params.id);
        return reply.header('cache-control', 'no-store').send(ok(secret));
      },
    );

    app.get(
      '/sites/:id/install-code',
      { schema: { tags, summary: 'The snippet and service worker to install on the site', params: idParam, response: { 200: installCodeResponse } } },
      async (request) => ok(await sites.installCode(currentUser(request).id, request.params.id)),
    );
  };
}
