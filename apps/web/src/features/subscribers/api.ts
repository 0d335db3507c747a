import {
  SUBSCRIBERS_PAGE_DEFAULT_LIMIT,
  subscriberErasedResponse,
  subscriberResponse,
  subscribersListResponse,
  updateTestDeviceResponse,
  type Subscriber,
  type SubscriberErased,
  type UpdateTestDeviceBody,
} from '@herald/contracts';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDownload, apiRequest, saveFile } from '../../lib/api-client';
import { invalidateSiteAudience, siteSubscribersKey } from '../../lib/site-queries';

// Spec §7 Subscribers: the list (filter, search, page) and removal; Herald's
// export (CSV of the list, one subscriber's data) and complete erasure.

export type ActiveFilter = 'all' | 'active' | 'inactive';

export interface SubscribersFilter {
  active: ActiveFilter;
  search: string;
  page: number;
  /** Reached with Next or Previous: the page after or before a cursor of the page shown (one page read however deep, docs/product.md "Subscribers"). */
  after?: string;
  before?: string;
}

export const SUBSCRIBERS_PAGE_SIZE = SUBSCRIBERS_PAGE_DEFAULT_LIMIT;

const subscribersKey = siteSubscribersKey;

/** The list's filters as query parameters, for the list and the CSV export alike. */
function filterParams({ active, search }: Pick<SubscribersFilter, 'active' | 'search'>): URLSearchParams {
  const params = new URLSearchParams();
  // Spec §2: All omits is_active.
  if (active !== 'all') params.set('is_active', String(active === 'active'));
  if (search.trim()) params.set('search', search.trim());
  return params;
}

export function subscribersQueryString(filter: SubscribersFilter): string {
  const params = filterParams(filter);
  params.set('page', String(filter.page));
  params.set('limit', String(SUBSCRIBERS_PAGE_SIZE));
  if (filter.after) params.set('after', filter.after);
  if (filter.before) params.set('before', filter.before);
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
    onSuccess: () => invalidateSiteAudience(queryClient, siteId),
  });
}

/** The subscribers the list's filters match, as a CSV file the browser saves; with the push keys when moving to another server. */
export async function downloadSubscribersCsv(siteId: string, filter: Pick<SubscribersFilter, 'active' | 'search'>, includeKeys: boolean): Promise<void> {
  const params = filterParams(filter);
  if (includeKeys) params.set('include_keys', 'true');
  const { blob, fileName } = await apiDownload(`/sites/${encodeURIComponent(siteId)}/subscribers/export?${params.toString()}`);
  saveFile(blob, fileName ?? 'subscribers.csv');
}

/** Everything Herald holds about one subscriber, as a JSON file the browser saves (a data subject's access request). */
export async function downloadSubscriberData(id: string): Promise<void> {
  const { blob, fileName } = await apiDownload(`/subscribers/${encodeURIComponent(id)}/export`);
  saveFile(blob, fileName ?? `herald-subscriber-${id}.json`);
}

export async function eraseSubscriber(id: string): Promise<SubscriberErased> {
  return (await apiRequest(`/subscribers/${encodeURIComponent(id)}?erase=true`, { method: 'DELETE', schema: subscriberErasedResponse })).erased;
}

export function useEraseSubscriberMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: eraseSubscriber,
    onSuccess: async () => {
      // An erased test device leaves the test-device list and the checklist too.
      await Promise.all([
        invalidateSiteAudience(queryClient, siteId),
        queryClient.invalidateQueries({ queryKey: ['sites', siteId, 'test-devices'] }),
        queryClient.invalidateQueries({ queryKey: ['sites', siteId, 'checklist'] }),
      ]);
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
