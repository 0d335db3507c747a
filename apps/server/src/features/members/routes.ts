import {
  acceptInvitationAsNewBody,
  acceptInvitationAsNewResponse,
  acceptInvitationResponse,
  changeRoleBody,
  envelope,
  invitationParams,
  invitationPreviewResponse,
  invitationTokenBody,
  inviteBody,
  inviteResponse,
  memberParams,
  memberResponse,
  membersResponse,
  siteIdParam,
  transferOwnershipBody,
} from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createMembersService } from './service';

const done = envelope(z.object({ done: z.literal(true) }));

/** Teams: members, roles and invitations (docs/product.md, "Teams"; the role each route needs: docs/security.md, "Tenancy"). */
export function membersRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const members = createMembersService(ctx);
    const signedIn = requireUser(ctx);
    const tags = ['members'];

    app.get(
      '/sites/:siteId/members',
      { preHandler: signedIn, schema: { tags, summary: 'Members, their roles, pending invitations (owners) and your role', params: siteIdParam, response: { 200: membersResponse } } },
      async (request) => ok(await members.list(currentUser(request).id, request.params.siteId)),
    );

    app.post(
      '/sites/:siteId/invitations',
      {
        preHandler: signedIn,
        schema: {
          tags,
          summary: 'Invite someone by email (owner)',
          description: 'Emails a single-use link valid 7 days; `also_site_ids` invites to other sites you own with the same link and role.',
          params: siteIdParam,
          body: inviteBody,
          response: { 201: inviteResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok({ invitations: await members.invite(currentUser(request), request.params.siteId, request.body) })),
    );

    app.delete(
      '/sites/:siteId/invitations/:id',
      { preHandler: signedIn, schema: { tags, summary: 'Revoke a pending invitation (owner)', params: invitationParams, response: { 200: done } } },
      async (request) => {
        await members.revokeInvitation(currentUser(request).id, request.params.siteId, request.params.id);
        return ok({ done: true as const });
      },
    );

    app.patch(
      '/sites/:siteId/members/:userId',
      { preHandler: signedIn, schema: { tags, summary: "Change a member's role (owner)", params: memberParams, body: changeRoleBody, response: { 200: memberResponse } } },
      async (request) => ok({ member: await members.changeRole(currentUser(request).id, request.params.siteId, request.params.userId, request.body.role) }),
    );

    app.delete(
      '/sites/:siteId/members/:userId',
      { preHandler: signedIn, schema: { tags, summary: 'Remove a member (owner)', params: memberParams, response: { 200: done } } },
      async (request) => {
        await members.remove(currentUser(request).id, request.params.siteId, request.params.userId);
        return ok({ done: true as const });
      },
    );

    app.post(
      '/sites/:siteId/leave',
      { preHandler: signedIn, schema: { tags, summary: 'Leave a site shared with you (the only owner cannot)', params: siteIdParam, response: { 200: done } } },
      async (request) => {
        await members.leave(currentUser(request).id, request.params.siteId);
        return ok({ done: true as const });
      },
    );

    app.post(
      '/sites/:siteId/transfer-ownership',
      { preHandler: signedIn, schema: { tags, summary: 'Make another member the owner; you stay on as admin (owner)', params: siteIdParam, body: transferOwnershipBody, response: { 200: done } } },
      async (request) => {
        await members.transferOwnership(currentUser(request).id, request.params.siteId, request.body.user_id);
        return ok({ done: true as const });
      },
    );

    // ---- The emailed link (the token travels in the body, never in a URL that proxies log)

    app.post(
      '/invitations/preview',
      { schema: { tags, summary: 'What an invitation link invites to', body: invitationTokenBody, response: { 200: invitationPreviewResponse } } },
      async (request) => ok(await members.preview(request.body.token)),
    );

    app.post(
      '/invitations/accept',
      { preHandler: signedIn, schema: { tags, summary: 'Accept an invitation sent to your address', body: invitationTokenBody, response: { 200: acceptInvitationResponse } } },
      async (request) => ok({ site_ids: await members.accept(currentUser(request), request.body.token) }),
    );

    app.post(
      '/invitations/accept-new',
      {
        schema: {
          tags,
          summary: 'Accept an invitation by creating your account (name and password)',
          description: 'Works while public sign-up is closed: the link proves the address. Signs the new account in.',
          body: acceptInvitationAsNewBody,
          response: { 201: acceptInvitationAsNewResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok(await members.acceptAsNew(request.body, request.ip))),
    );
  };
}
