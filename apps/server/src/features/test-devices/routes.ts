import {
  claimTestDeviceBody,
  claimTestDeviceResponse,
  idParam,
  siteIdParam,
  testDeviceLinkResponse,
  testDevicesResponse,
  testSendContentBody,
  testSendResponse,
  updateTestDeviceBody,
  updateTestDeviceResponse,
} from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import type { MemoryRateLimit } from '../../platform/memory-rate-limiter';
import { acceptJsonSentAsText, limitPublicRequests, openCorsForPublicRoutes } from '../../platform/public-routes';
import { ok } from '../../platform/responses';
import { createTestDevicesService, type TestDevicesService } from './service';

/** A claim happens once per link; the limits only stop floods of guessed codes. */
export const PUBLIC_TEST_DEVICE_LIMITS: { perAddress: MemoryRateLimit; perSite: MemoryRateLimit } = {
  perAddress: { limit: 10, windowMs: 60_000, maxKeys: 50_000 },
  perSite: { limit: 100, windowMs: 60_000, maxKeys: 20_000 },
};

const CLAIM_PATH = '/public/sites/:siteId/test-devices';

const sendTestNote =
  'Sends to the site’s test devices only and answers when every push service has answered: `data.test {devices, sent, failed, results [{subscriber_id, name, outcome: sent|failed|expired, error}]}`. The push carries the same payload as a real send with a token that counts nowhere: the notification’s status, counters and performance, the hourly rollup and the dashboard do not change. 409 when the site has no test devices.';

function publicTestDeviceRoutes(ctx: AppContext, testDevices: TestDevicesService): FastifyPluginAsyncZod {
  return async (app) => {
    openCorsForPublicRoutes(app, [CLAIM_PATH]);
    acceptJsonSentAsText(app);
    limitPublicRequests(app, ctx.clock, {
      ...PUBLIC_TEST_DEVICE_LIMITS,
      siteMessage: (seconds) => `Too many test-device requests for this site. Please try again in ${seconds} seconds.`,
    });
    app.post(
      CLAIM_PATH,
      {
        bodyLimit: 4096,
        schema: {
          tags: ['public'],
          security: [],
          summary: 'Make this browser a test device with a one-time link’s code (browser SDK; CORS open)',
          description: 'Called by the SDK after it subscribed on a page opened with `?herald_test=CODE`. 404 for an unknown code or subscription, 410 for a used or expired link.',
          params: siteIdParam,
          body: claimTestDeviceBody,
          response: { 200: claimTestDeviceResponse },
        },
      },
      async (request) => ok({ device: await testDevices.claim(request.params.siteId, request.body.endpoint, request.body.code) }),
    );
  };
}

function dashboardTestDeviceRoutes(ctx: AppContext, testDevices: TestDevicesService): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['test devices'];

    app.get(
      '/sites/:siteId/test-devices',
      { schema: { tags, summary: 'The site’s active test devices', params: siteIdParam, response: { 200: testDevicesResponse } } },
      async (request) => ok({ devices: await testDevices.list(currentUser(request).id, request.params.siteId) }),
    );

    app.post(
      '/sites/:siteId/test-devices/link',
      {
        schema: {
          tags,
          summary: 'A one-time link to the site that makes the browser opening it a test device',
          description: 'The site’s address with `?herald_test=CODE`, valid for an hour and once. Herald’s snippet on the page asks for permission, subscribes and claims it.',
          params: siteIdParam,
          response: { 200: testDeviceLinkResponse },
        },
      },
      async (request) => ok({ link: await testDevices.createLink(currentUser(request).id, request.params.siteId) }),
    );

    app.patch(
      '/subscribers/:id/test-device',
      {
        schema: {
          tags,
          summary: 'Mark a subscriber as a test device (or not), and name it',
          description: 'Without a name a device is called "<Browser> on <OS>" (or keeps the name it has).',
          params: idParam,
          body: updateTestDeviceBody,
          response: { 200: updateTestDeviceResponse },
        },
      },
      async (request) => ok({ device: await testDevices.update(currentUser(request).id, request.params.id, request.body) }),
    );

    app.post(
      '/notifications/:id/test',
      { schema: { tags, summary: 'Send a notification’s current content to the test devices (no body)', description: sendTestNote, params: idParam, response: { 200: testSendResponse } } },
      async (request) => ok({ test: await testDevices.sendNotificationTest(currentUser(request).id, request.params.id) }),
    );

    app.post(
      '/sites/:siteId/notifications/test',
      {
        schema: {
          tags,
          summary: 'Send content not saved yet (the composer’s) to the test devices',
          description: sendTestNote,
          params: siteIdParam,
          body: testSendContentBody,
          response: { 200: testSendResponse },
        },
      },
      async (request) => ok({ test: await testDevices.sendContentTest(currentUser(request).id, request.params.siteId, request.body) }),
    );
  };
}

export function testDevicesRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const testDevices = createTestDevicesService(ctx);
    await app.register(publicTestDeviceRoutes(ctx, testDevices));
    await app.register(dashboardTestDeviceRoutes(ctx, testDevices));
  };
}
