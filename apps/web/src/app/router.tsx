import type { ComponentType } from 'react';
import { createBrowserRouter, data, type RouteObject } from 'react-router';
import { importOrReload } from '../lib/chunk-reload';
import { registerNavigator } from '../lib/navigation';
import { ErrorScreen } from './error-screen';
import { ProtectedRoute } from './protected-route';
import { AppShell } from './shell/app-shell';

/**
 * Loads a page's module when its route is first visited, so the landing page
 * does not carry the dashboard. A chunk gone after an upgrade reloads the page
 * once (lib/chunk-reload.ts).
 */
function page<Name extends string>(load: () => Promise<Record<Name, ComponentType>>, name: Name): RouteObject['lazy'] {
  return async () => ({ Component: (await importOrReload(load))[name] });
}

/**
 * Every screen's address (spec §2). To add a page, add one line to the list it
 * belongs to, e.g. in `shellRoutes`:
 *   { path: '/segments', lazy: page(() => import('../features/segments/pages/segments-page'), 'SegmentsPage') },
 * Unknown addresses fall through to the error screen (404).
 */
const publicRoutes: RouteObject[] = [
  { path: '/', lazy: page(() => import('../features/landing/pages/landing-page'), 'LandingPage') },
  { path: '/login', lazy: page(() => import('../features/auth/pages/login-page'), 'LoginPage') },
  { path: '/forgot-password', lazy: page(() => import('../features/auth/pages/forgot-password-page'), 'ForgotPasswordPage') },
  { path: '/reset-password', lazy: page(() => import('../features/auth/pages/reset-password-page'), 'ResetPasswordPage') },
  { path: '/verify-email', lazy: page(() => import('../features/auth/pages/verify-email-page'), 'VerifyEmailPage') },
  { path: '/setup', lazy: page(() => import('../features/auth/pages/setup-page'), 'SetupPage') },
  { path: '/invitation', lazy: page(() => import('../features/members/pages/invitation-page'), 'InvitationPage') },
];

/** Signed-in pages without the shell. */
const protectedBareRoutes: RouteObject[] = [
  { path: '/sites/new', lazy: page(() => import('../features/sites/pages/create-site-page'), 'CreateSitePage') },
];

/** Signed-in pages inside the shell (sidebar + header). */
const shellRoutes: RouteObject[] = [
  { path: '/notifications', lazy: page(() => import('../features/notifications/pages/notifications-page'), 'NotificationsPage') },
  { path: '/notifications/new', lazy: page(() => import('../features/notifications/pages/new-notification-page'), 'NewNotificationPage') },
  { path: '/notifications/:id', lazy: page(() => import('../features/notifications/pages/notification-page'), 'NotificationDetailPage') },
  { path: '/notifications/:id/edit', lazy: page(() => import('../features/notifications/pages/notification-page'), 'EditNotificationPage') },
  { path: '/subscribers', lazy: page(() => import('../features/subscribers/pages/subscribers-page'), 'SubscribersPage') },
  { path: '/dashboard', lazy: page(() => import('../features/dashboard/pages/dashboard-page'), 'DashboardPage') },
  { path: '/help', lazy: page(() => import('../features/help/pages/help-page'), 'HelpPage') },
  { path: '/settings', lazy: page(() => import('../features/sites/pages/settings-page'), 'SettingsPage') },
  { path: '/segments', lazy: page(() => import('../features/segments/pages/segments-page'), 'SegmentsPage') },
  { path: '/campaigns', lazy: page(() => import('../features/welcome-campaigns/pages/campaigns-page'), 'CampaignsPage') },
  { path: '/campaigns/new', lazy: page(() => import('../features/welcome-campaigns/pages/new-campaign-page'), 'NewCampaignPage') },
  { path: '/campaigns/:id/edit', lazy: page(() => import('../features/welcome-campaigns/pages/edit-campaign-page'), 'EditCampaignPage') },
  { path: '/rss-feeds', lazy: page(() => import('../features/rss-feeds/pages/rss-feeds-page'), 'RssFeedsPage') },
  { path: '/profile', lazy: page(() => import('../features/auth/pages/profile-page'), 'ProfilePage') },
];

export const routes: RouteObject[] = [
  {
    errorElement: <ErrorScreen />,
    // Shown for the moment a lazily loaded page's code arrives on first load.
    hydrateFallbackElement: <div className="min-h-dvh bg-slate-50" />,
    children: [
      ...publicRoutes,
      {
        element: <ProtectedRoute />,
        children: [...protectedBareRoutes, { element: <AppShell />, children: shellRoutes }],
      },
      {
        // Anything else (including pages of later issues not built yet) is a 404 on the error screen.
        path: '*',
        element: null,
        loader: () => {
          throw data(null, { status: 404, statusText: 'Not Found' });
        },
      },
    ],
  },
];

type AppRouter = ReturnType<typeof createBrowserRouter>;

/** Lets the API client send a signed-out visitor to /login without a page reload. */
export function connectNavigator(router: Pick<AppRouter, 'navigate' | 'state'>): void {
  registerNavigator({
    pathname: () => router.state.location.pathname,
    navigate: (path, options) => void router.navigate(path, options),
  });
}

export function createAppRouter(): AppRouter {
  const router = createBrowserRouter(routes);
  connectNavigator(router);
  return router;
}
