import type { QueryClient } from '@tanstack/react-query';

// Cache keys several screens share. Every query about one site lives under
// ['sites', siteId, …]; the dashboard's figures under ['sites', siteId,
// 'analytics']. Results stay fresh for 5 minutes (spec §9), so a change on
// one screen must mark what it changes on another as stale, or the dashboard
// would show figures from before a send until the 5 minutes are over.

export const siteAnalyticsKey = (siteId: string) => ['sites', siteId, 'analytics'] as const;
export const siteSegmentsKey = (siteId: string) => ['sites', siteId, 'segments'] as const;

export const siteNotificationsKey = (siteId: string) => ['sites', siteId, 'notifications'] as const;
export const siteSubscribersKey = (siteId: string) => ['sites', siteId, 'subscribers'] as const;

/** After a send, a removal or a settings change: the dashboard fetches its figures again when next shown. */
export function invalidateSiteAnalytics(queryClient: QueryClient, siteId: string): Promise<void> {
  return queryClient.invalidateQueries({ queryKey: siteAnalyticsKey(siteId) });
}

/**
 * After the audience changed (subscribers removed, erased, cleaned up or
 * imported): the subscriber list, the dashboard's figures, and the segments
 * with the reach counts ("Will reach N subscribers") read from them.
 */
export function invalidateSiteAudience(queryClient: QueryClient, siteId: string): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: siteSubscribersKey(siteId) }),
    invalidateSiteAnalytics(queryClient, siteId),
    queryClient.invalidateQueries({ queryKey: siteSegmentsKey(siteId) }),
  ]);
}

/** After notifications were made or started elsewhere (a feed check, an A/B winner): the lists and the dashboard. */
export function invalidateSiteNotifications(queryClient: QueryClient, siteId: string): Promise<unknown> {
  return Promise.all([queryClient.invalidateQueries({ queryKey: siteNotificationsKey(siteId) }), invalidateSiteAnalytics(queryClient, siteId)]);
}
