// Every feature's API routes, mounted under /api by app.ts. A new feature adds
// one line here (see ARCHITECTURE.md, "Adding a feature").
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context';
import { analyticsRoutes } from './analytics/routes';
import { authRoutes } from './auth/routes';
import { notificationsRoutes } from './notifications/routes';
import { sitesRoutes } from './sites/routes';
import { subscribersRoutes } from './subscribers/routes';
import { trackingRoutes } from './tracking/routes';
import { uploadsRoutes } from './uploads/routes';

export const apiRoutes: Array<(ctx: AppContext) => FastifyPluginAsyncZod> = [
  authRoutes,
  sitesRoutes,
  subscribersRoutes,
  uploadsRoutes,
  notificationsRoutes,
  trackingRoutes,
  analyticsRoutes,
];
