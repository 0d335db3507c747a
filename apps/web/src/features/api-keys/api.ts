import {
  apiKeysResponse,
  createApiKeyResponse,
  revokeApiKeyResponse,
  siteEventsResponse,
  type ApiKey,
  type CreatedApiKey,
  type SiteEvent,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';

// Settings → API Keys and Automation: a site's API keys (for the v1 events
// API) and the events that reached Herald lately.

export const apiKeysQueryKey = (siteId: string) => ['sites', siteId, 'api-keys'] as const;
export const siteEventsQueryKey = (siteId: string) => ['sites', siteId, 'events'] as const;

const sitePath = (siteId: string) => `/sites/${encodeURIComponent(siteId)}`;

export async function fetchApiKeys(siteId: string): Promise<ApiKey[]> {
  return (await apiRequest(`${sitePath(siteId)}/api-keys`, { schema: apiKeysResponse })).api_keys;
}

export function useApiKeysQuery(siteId: string) {
  return useQuery({ queryKey: apiKeysQueryKey(siteId), queryFn: () => fetchApiKeys(siteId) });
}

export function createApiKey(input: { siteId: string; name: string }): Promise<CreatedApiKey> {
  return apiRequest(`${sitePath(input.siteId)}/api-keys`, { method: 'POST', body: { name: input.name }, schema: createApiKeyResponse });
}

/** The created key's secret stays in the caller's state only: the cache holds the listed shape, as the server lists it. */
export function useCreateApiKeyMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => createApiKey({ siteId, name }),
    onSuccess: (created) => {
      queryClient.setQueryData<ApiKey[]>(apiKeysQueryKey(siteId), (keys) => (keys ? [...keys, created.api_key] : keys));
    },
  });
}

export async function revokeApiKey(id: string): Promise<void> {
  await apiRequest(`/api-keys/${encodeURIComponent(id)}`, { method: 'DELETE', schema: revokeApiKeyResponse });
}

export function useRevokeApiKeyMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeApiKey,
    onSuccess: (_result, id) => {
      queryClient.setQueryData<ApiKey[]>(apiKeysQueryKey(siteId), (keys) => keys?.filter((key) => key.id !== id));
    },
  });
}

export const RECENT_EVENTS_LIMIT = 50;

export async function fetchSiteEvents(siteId: string): Promise<SiteEvent[]> {
  return (await apiRequest(`${sitePath(siteId)}/events?limit=${RECENT_EVENTS_LIMIT}`, { schema: siteEventsResponse })).events;
}

export function useSiteEventsQuery(siteId: string) {
  return useQuery({ queryKey: siteEventsQueryKey(siteId), queryFn: () => fetchSiteEvents(siteId) });
}
