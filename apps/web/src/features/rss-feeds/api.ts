import {
  rssFeedCheckResponse,
  rssFeedDeletedResponse,
  rssFeedListResponse,
  rssFeedResponse,
  type CreateRssFeedBody,
  type RssFeed,
  type RssFeedCheck,
  type UpdateRssFeedBody,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';
import { invalidateSiteNotifications } from '../../lib/site-queries';

// Spec §7 RSS feeds: fetchers and hooks side by side. Every change refreshes
// the site's feed list.

export const rssFeedsQueryKey = (siteId: string) => ['sites', siteId, 'rss-feeds'] as const;

export async function fetchRssFeeds(siteId: string): Promise<RssFeed[]> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/rss-feeds`, { schema: rssFeedListResponse })).feeds;
}

/** How often the list looks again while a new or re-activated feed waits for its first check (which runs right away on the server). */
const FIRST_CHECK_REFRESH_MS = 3000;

export function useRssFeedsQuery(siteId: string) {
  return useQuery({
    queryKey: rssFeedsQueryKey(siteId),
    queryFn: () => fetchRssFeeds(siteId),
    refetchInterval: (query) => (query.state.data?.some((feed) => feed.is_active && feed.last_fetched_at === null && !feed.last_error) ? FIRST_CHECK_REFRESH_MS : false),
  });
}

export async function createRssFeed(input: { siteId: string; body: CreateRssFeedBody }): Promise<RssFeed> {
  return (await apiRequest(`/sites/${encodeURIComponent(input.siteId)}/rss-feeds`, { method: 'POST', body: input.body, schema: rssFeedResponse })).feed;
}

export async function updateRssFeed(input: { id: string; changes: UpdateRssFeedBody }): Promise<RssFeed> {
  return (await apiRequest(`/rss-feeds/${encodeURIComponent(input.id)}`, { method: 'PATCH', body: input.changes, schema: rssFeedResponse })).feed;
}

export async function deleteRssFeed(id: string): Promise<void> {
  await apiRequest(`/rss-feeds/${encodeURIComponent(id)}`, { method: 'DELETE', schema: rssFeedDeletedResponse });
}

export async function checkRssFeed(id: string): Promise<{ check: RssFeedCheck; feed: RssFeed }> {
  return apiRequest(`/rss-feeds/${encodeURIComponent(id)}/check`, { method: 'POST', schema: rssFeedCheckResponse });
}

/** Keeps the cached list in step with a feed the server just returned. */
function useFeedListUpdater(siteId: string) {
  const queryClient = useQueryClient();
  return {
    replace: (feed: RssFeed) =>
      queryClient.setQueryData<RssFeed[]>(rssFeedsQueryKey(siteId), (feeds) => feeds?.map((f) => (f.id === feed.id ? feed : f))),
    refresh: () => queryClient.invalidateQueries({ queryKey: rssFeedsQueryKey(siteId) }),
  };
}

export function useCreateRssFeedMutation(siteId: string) {
  const list = useFeedListUpdater(siteId);
  return useMutation({ mutationFn: (body: CreateRssFeedBody) => createRssFeed({ siteId, body }), onSuccess: () => list.refresh() });
}

export function useUpdateRssFeedMutation(siteId: string) {
  const list = useFeedListUpdater(siteId);
  return useMutation({
    mutationFn: updateRssFeed,
    onSuccess: (feed) => {
      list.replace(feed);
      void list.refresh();
    },
  });
}

export function useDeleteRssFeedMutation(siteId: string) {
  const list = useFeedListUpdater(siteId);
  return useMutation({ mutationFn: deleteRssFeed, onSuccess: () => list.refresh() });
}

export function useCheckRssFeedMutation(siteId: string) {
  const list = useFeedListUpdater(siteId);
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: checkRssFeed,
    onSuccess: ({ feed, check }) => {
      list.replace(feed);
      // New posts became notifications: the notifications list and the dashboard show them.
      if (check.sent > 0 || check.drafted > 0) void invalidateSiteNotifications(queryClient, siteId);
    },
  });
}
