import { createSiteBody, envelope, idParam, installCodeResponse, siteResponse, sitesResponse, updateSiteBody } from '@herald/contracts';
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

    app.get(
      '/sites/:id/install-code',
      { schema: { tags, summary: 'The snippet and service worker to install on the site', params: idParam, response: { 200: installCodeResponse } } },
      async (request) => ok(await sites.installCode(currentUser(request).id, request.params.id)),
    );
  };
}
