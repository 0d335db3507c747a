import {
  DASHBOARD_DEFAULT_DAYS,
  dashboardResponse,
  deliveryHealthResponse,
  envelope,
  notificationListResponse,
  staleCleanupResponse,
  staleSubscribersResponse,
  type DashboardData,
  type DeliveryHealthData,
  type Notification,
  type StaleSubscribersSummary,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { ApiError, apiRequest } from '../../lib/api-client';
import { invalidateSiteAudience, siteAnalyticsKey } from '../../lib/site-queries';

// Spec §7: the dashboard's three calls. Fetchers and hooks side by side.

export const dashboardQueryKey = (siteId: string, days: number) => [...siteAnalyticsKey(siteId), 'dashboard', days] as const;

export function fetchDashboard(siteId: string, days = DASHBOARD_DEFAULT_DAYS): Promise<DashboardData> {
  return apiRequest(`/sites/${encodeURIComponent(siteId)}/analytics/dashboard?days=${days}`, { schema: dashboardResponse });
}

export function useDashboardQuery(siteId: string, days = DASHBOARD_DEFAULT_DAYS) {
  return useQuery({ queryKey: dashboardQueryKey(siteId, days), queryFn: () => fetchDashboard(siteId, days) });
}

/** The Delivery section (issue 11): per push service, from the hourly rollups. Under the analytics key: Refresh and sends refetch it. */
export const deliveryHealthKey = (siteId: string, days: number) => [...siteAnalyticsKey(siteId), 'delivery', days] as const;

export function fetchDeliveryHealth(siteId: string, days: number): Promise<DeliveryHealthData> {
  return apiRequest(`/sites/${encodeURIComponent(siteId)}/analytics/delivery?days=${days}`, { schema: deliveryHealthResponse });
}

export function useDeliveryHealthQuery(siteId: string, days: number) {
  return useQuery({ queryKey: deliveryHealthKey(siteId, days), queryFn: () => fetchDeliveryHealth(siteId, days) });
}

export const staleSubscribersKey = (siteId: string) => [...siteAnalyticsKey(siteId), 'stale-subscribers'] as const;

export function fetchStaleSubscribers(siteId: string): Promise<StaleSubscribersSummary> {
  return apiRequest(`/sites/${encodeURIComponent(siteId)}/subscribers/stale`, { schema: staleSubscribersResponse });
}

export function useStaleSubscribersQuery(siteId: string) {
  return useQuery({ queryKey: staleSubscribersKey(siteId), queryFn: () => fetchStaleSubscribers(siteId) });
}

/** The one-click clean-up: deactivates the stale subscribers; the dashboard's figures and the subscriber list are fetched again. */
export function useStaleCleanupMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiRequest(`/sites/${encodeURIComponent(siteId)}/subscribers/stale/deactivate`, { method: 'POST', schema: staleCleanupResponse }),
    onSuccess: (result) => {
      queryClient.setQueryData(staleSubscribersKey(siteId), result.after);
      void invalidateSiteAudience(queryClient, siteId);
    },
  });
}

/** What the dashboard's Refresh fetches again: its figures and both panels. */
export function dashboardRefreshKeys(siteId: string): readonly (readonly unknown[])[] {
  return [siteAnalyticsKey(siteId), recurringNotificationsQueryKey(siteId), welcomeCampaignsQueryKey(siteId)];
}

/** Spec §2 Dashboard "Recurring Notifications panel": GET /sites/{siteId}/notifications?type=RECURRING. */
export const recurringNotificationsQueryKey = (siteId: string) => ['sites', siteId, 'notifications', { type: 'RECURRING' }] as const;

export async function fetchRecurringNotifications(siteId: string): Promise<Notification[]> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/notifications?type=RECURRING`, { schema: notificationListResponse })).notifications;
}

export function useRecurringNotificationsQuery(siteId: string) {
  return useQuery({ queryKey: recurringNotificationsQueryKey(siteId), queryFn: () => fetchRecurringNotifications(siteId) });
}

/**
 * The fields of a welcome campaign the dashboard shows (spec §3). Read
 * leniently: the panel needs the name, state, step count and creation date only.
 */
const welcomeCampaignSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    is_active: z.boolean(),
    created_at: z.string(),
    steps_count: z.number().optional(),
    steps: z.array(z.unknown()).optional(),
  })
  .transform(({ steps, steps_count, ...campaign }) => ({ ...campaign, steps_count: steps_count ?? steps?.length ?? 0 }));
export type WelcomeCampaignSummary = z.output<typeof welcomeCampaignSummary>;

const welcomeCampaignsResponse = envelope(z.object({ campaigns: z.array(welcomeCampaignSummary) }));

/**
 * Below the campaigns page's key (['sites', siteId, 'welcome-campaigns'] holds
 * whole campaigns there), so the two shapes never share a cache entry, and a
 * change on the campaigns page refreshes this panel too.
 */
export const welcomeCampaignsQueryKey = (siteId: string) => ['sites', siteId, 'welcome-campaigns', 'summary'] as const;

/** GET /sites/{siteId}/welcome-campaigns (data.campaigns). A 404 means the site has none (or the server has no campaigns yet). */
export async function fetchWelcomeCampaigns(siteId: string): Promise<WelcomeCampaignSummary[]> {
  try {
    return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/welcome-campaigns`, { schema: welcomeCampaignsResponse })).campaigns;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return [];
    throw error;
  }
}

export function useWelcomeCampaignsQuery(siteId: string) {
  return useQuery({ queryKey: welcomeCampaignsQueryKey(siteId), queryFn: () => fetchWelcomeCampaigns(siteId) });
}
