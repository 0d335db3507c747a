// Every feature's API routes, mounted under /api by app.ts. A new feature adds
// one line here (see ARCHITECTURE.md, "Adding a feature").
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context';
import { apiKeysRoutes } from './api-keys/routes';
import { analyticsRoutes } from './analytics/routes';
import { auditLogRoutes } from './audit-log/routes';
import { authRoutes } from './auth/routes';
import { membersRoutes } from './members/routes';
import { abTestRoutes } from './notifications/ab-test-routes';
import { notificationsRoutes } from './notifications/routes';
import { promptsRoutes } from './prompts/routes';
import { segmentsRoutes } from './segments/routes';
import { siteEventsRoutes } from './site-events/routes';
import { rssFeedsRoutes } from './rss-feeds/routes';
import { sitesRoutes } from './sites/routes';
import { subscriberImportsRoutes } from './subscriber-imports/routes';
import { subscribersRoutes } from './subscribers/routes';
import { systemRoutes } from './system/routes';
import { testDevicesRoutes } from './test-devices/routes';
import { trackingRoutes } from './tracking/routes';
import { uploadsRoutes } from './uploads/routes';
import { webhooksRoutes } from './webhooks/routes';
import { vapidKeysRoutes } from './vapid-keys/routes';
import { welcomeCampaignsRoutes } from './welcome-campaigns/routes';

export const apiRoutes: Array<(ctx: AppContext) => FastifyPluginAsyncZod> = [
  authRoutes,
  sitesRoutes,
  subscribersRoutes,
  uploadsRoutes,
  notificationsRoutes,
  abTestRoutes,
  trackingRoutes,
  segmentsRoutes,
  apiKeysRoutes,
  siteEventsRoutes,
  welcomeCampaignsRoutes,
  rssFeedsRoutes,
  analyticsRoutes,
  systemRoutes,
  membersRoutes,
  auditLogRoutes,
  promptsRoutes,
  testDevicesRoutes,
  webhooksRoutes,
  vapidKeysRoutes,
  subscriberImportsRoutes,
];
