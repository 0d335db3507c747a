import { importVapidKeyBody, retireVapidKeyResponse, siteIdParam, vapidKeyParams, vapidKeyResponse, vapidKeysResponse } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createVapidKeysService } from './service';

/** Settings → VAPID Keys: a site's key pairs (admins and owners; the private keys never leave the server). */
export function vapidKeysRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const keys = createVapidKeysService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['vapid-keys'];

    app.get(
      '/sites/:siteId/vapid-keys',
      {
        schema: {
          tags,
          summary: 'List a site’s VAPID keys with the active subscribers of each (never the private keys)',
          params: siteIdParam,
          response: { 200: vapidKeysResponse },
        },
      },
      async (request) => ok({ keys: await keys.list(currentUser(request).id, request.params.siteId) }),
    );

    app.post(
      '/sites/:siteId/vapid-keys',
      {
        schema: {
          tags,
          summary: 'Import a VAPID key pair (base64url raw keys as web-push libraries export them, or PEM)',
          description:
            'public_key: the 65-byte uncompressed P-256 point, base64url, or an SPKI PEM; private_key: the 32-byte private key, base64url, or a PKCS8 / SEC1 PEM. 400 when a key is not P-256 or the private key does not belong to the public key; 409 when the public key is already on the site. The new key is not primary until made so.',
          params: siteIdParam,
          body: importVapidKeyBody,
          response: { 201: vapidKeyResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok({ key: await keys.import(currentUser(request).id, request.params.siteId, request.body) })),
    );

    app.post(
      '/sites/:siteId/vapid-keys/:keyId/primary',
      {
        schema: {
          tags,
          summary: 'Make a VAPID key the primary one (new subscriptions and the snippet use it; browsers on another key move to it on their next page view)',
          params: vapidKeyParams,
          response: { 200: vapidKeyResponse },
        },
      },
      async (request) => ok({ key: await keys.makePrimary(currentUser(request).id, request.params.siteId, request.params.keyId) }),
    );

    app.delete(
      '/sites/:siteId/vapid-keys/:keyId',
      {
        schema: {
          tags,
          summary: 'Retire a VAPID key that is not primary and that no active subscriber uses (409 otherwise)',
          params: vapidKeyParams,
          response: { 200: retireVapidKeyResponse },
        },
      },
      async (request) => {
        await keys.retire(currentUser(request).id, request.params.siteId, request.params.keyId);
        return ok({ retired: true as const });
      },
    );
  };
}
