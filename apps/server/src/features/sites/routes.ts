import {
  createSiteBody,
  envelope,
  idParam,
  identitySecretResponse,
  installCheckResponse,
  installCodeResponse,
  setupChecklistResponse,
  siteResponse,
  sitesResponse,
  updateSetupChecklistBody,
  updateSiteBody,
} from '@herald/contracts';
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
      'The key of the HMAC-SHA256 your backend computes over a user id (lowercase hex) so `herald.identify(id, hash)` is accepted (docs/security.md, "Identity verification"). Keep it on your server. Owner only: an admin, editor or viewer of the site gets 403 “This needs the owner role.”; another user’s site answers 404.';

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

    app.post(
      '/sites/:id/install-check',
      {
        schema: {
          tags,
          summary: 'Check the installation on the site (no body; answers when every check is done)',
          description:
            'Fetches the site’s URL, its service-worker file and its web app manifest (private addresses are refused unless OUTBOUND_ALLOW_HOSTS names them) and answers `data.checks [{id, ok, severity, message, fix}]` with ids `reachable`, `site_https`, `public_url_https`, `snippet`, `service_worker`, `single_service_worker`, `manifest`. `passed` is false when a check of severity `error` failed. The result is kept for the setup checklist. At most 60 checks per user and hour (429).',
          params: idParam,
          response: { 200: installCheckResponse },
        },
      },
      async (request) => ok(await sites.installCheck(currentUser(request).id, request.params.id)),
    );

    app.get(
      '/sites/:id/checklist',
      { schema: { tags, summary: 'The setup checklist: install check, first subscriber, test devices and test sent', params: idParam, response: { 200: setupChecklistResponse } } },
      async (request) => ok({ checklist: await sites.checklist(currentUser(request).id, request.params.id) }),
    );

    app.patch(
      '/sites/:id/checklist',
      {
        schema: {
          tags,
          summary: 'Hide the setup checklist from the dashboard (or show it again)',
          params: idParam,
          body: updateSetupChecklistBody,
          response: { 200: setupChecklistResponse },
        },
      },
      async (request) => ok({ checklist: await sites.setChecklistDismissed(currentUser(request).id, request.params.id, request.body.dismissed) }),
    );
  };
}
