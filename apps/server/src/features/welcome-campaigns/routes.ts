import { campaignBody, campaignDeletedResponse, campaignListResponse, campaignPatchBody, campaignResponse, idParam, siteIdParam } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createWelcomeCampaignsService } from './service';

/** Spec §7 Welcome campaigns. */
export function welcomeCampaignsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const campaigns = createWelcomeCampaignsService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['welcome-campaigns'];

    app.post(
      '/sites/:siteId/welcome-campaigns',
      {
        schema: {
          tags,
          summary: 'Create a welcome campaign (activating it deactivates the site’s other campaigns)',
          params: siteIdParam,
          body: campaignBody,
          response: { 201: campaignResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok({ campaign: await campaigns.create(currentUser(request).id, request.params.siteId, request.body) })),
    );

    app.get(
      '/sites/:siteId/welcome-campaigns',
      { schema: { tags, summary: 'List the site’s welcome campaigns with their current steps and stats', params: siteIdParam, response: { 200: campaignListResponse } } },
      async (request) => ok({ campaigns: await campaigns.list(currentUser(request).id, request.params.siteId) }),
    );

    app.get('/welcome-campaigns/:id', { schema: { tags, summary: 'Get a welcome campaign', params: idParam, response: { 200: campaignResponse } } }, async (request) =>
      ok({ campaign: await campaigns.get(currentUser(request).id, request.params.id) }),
    );

    app.patch(
      '/welcome-campaigns/:id',
      {
        schema: {
          tags,
          summary: 'Activate, deactivate or edit a welcome campaign (edits apply to subscribers who subscribe afterwards)',
          params: idParam,
          body: campaignPatchBody,
          response: { 200: campaignResponse },
        },
      },
      async (request) => ok({ campaign: await campaigns.update(currentUser(request).id, request.params.id, request.body) }),
    );

    app.delete(
      '/welcome-campaigns/:id',
      { schema: { tags, summary: 'Delete a welcome campaign and cancel its pending steps', params: idParam, response: { 200: campaignDeletedResponse } } },
      async (request) => {
        await campaigns.remove(currentUser(request).id, request.params.id);
        return ok({ deleted: true as const });
      },
    );
  };
}
