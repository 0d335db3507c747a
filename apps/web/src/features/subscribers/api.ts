import { SUBSCRIBERS_PAGE_DEFAULT_LIMIT, subscriberResponse, subscribersListResponse, updateTestDeviceResponse, type Subscriber, type UpdateTestDeviceBody } from '@herald/contracts';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';
import { invalidateSiteAnalytics } from '../../lib/site-queries';

// Spec §7 Subscribers: the list (filter, search, page) and removal.

export type ActiveFilter = 'all' | 'active' | 'inactive';

export interface SubscribersFilter {
  active: ActiveFilter;
  search: string;
  page: number;
}

export const SUBSCRIBERS_PAGE_SIZE = SUBSCRIBERS_PAGE_DEFAULT_LIMIT;

const subscribersKey = (siteId: string) => ['sites', siteId, 'subscribers'] as const;

export function subscribersQueryString({ active, search, page }: SubscribersFilter): string {
  const params = new URLSearchParams();
  // Spec §2: All omits is_active.
  if (active !== 'all') params.set('is_active', String(active === 'active'));
  if (search.trim()) params.set('search', search.trim());
  params.set('page', String(page));
  params.set('limit', String(SUBSCRIBERS_PAGE_SIZE));
  return params.toString();
}

export function fetchSubscribers(siteId: string, filter: SubscribersFilter) {
  return apiRequest(`/sites/${encodeURIComponent(siteId)}/subscribers?${subscribersQueryString(filter)}`, { schema: subscribersListResponse });
}

export function useSubscribersQuery(siteId: string, filter: SubscribersFilter) {
  return useQuery({
    queryKey: [...subscribersKey(siteId), filter],
    queryFn: () => fetchSubscribers(siteId, filter),
    // Typing in the search box keeps the last table on screen until the new one arrives.
    placeholderData: keepPreviousData,
  });
}

export async function removeSubscriber(id: string): Promise<Subscriber> {
  return (await apiRequest(`/subscribers/${encodeURIComponent(id)}`, { method: 'DELETE', schema: subscriberResponse })).subscriber;
}

export function useRemoveSubscriberMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: removeSubscriber,
    onSuccess: () => {
      void invalidateSiteAnalytics(queryClient, siteId);
      return queryClient.invalidateQueries({ queryKey: subscribersKey(siteId) });
    },
  });
}

/** Marks a subscriber as one of the owner's test devices (or not), and names it; "Send test" reaches test devices only. */
export function useSetTestDeviceMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, ...body }: UpdateTestDeviceBody & { id: string }) =>
      (await apiRequest(`/subscribers/${encodeURIComponent(id)}/test-device`, { method: 'PATCH', body, schema: updateTestDeviceResponse })).device,
    onSuccess: async () => {
      // The setup checklist and the test-device list count them too.
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: subscribersKey(siteId) }),
        queryClient.invalidateQueries({ queryKey: ['sites', siteId, 'test-devices'] }),
        queryClient.invalidateQueries({ queryKey: ['sites', siteId, 'checklist'] }),
      ]);
    },
  });
}
