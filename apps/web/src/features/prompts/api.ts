import { promptSettingsResponse, subscriberGrowthResponse, type PromptSettings, type PromptSettingsBody } from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';

// The opt-in prompt a site's visitors see (Settings → Installation), and how
// each prompt type converts (from the subscriber analytics).

export const promptSettingsQueryKey = (siteId: string) => ['sites', siteId, 'prompt-settings'] as const;
const site = (siteId: string) => `/sites/${encodeURIComponent(siteId)}`;

export function usePromptSettingsQuery(siteId: string) {
  return useQuery({
    queryKey: promptSettingsQueryKey(siteId),
    queryFn: async () => (await apiRequest(`${site(siteId)}/prompt-settings`, { schema: promptSettingsResponse })).prompt,
  });
}

export function useSavePromptSettingsMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (settings: PromptSettingsBody): Promise<PromptSettings> =>
      (await apiRequest(`${site(siteId)}/prompt-settings`, { method: 'PUT', body: settings, schema: promptSettingsResponse })).prompt,
    onSuccess: (settings) => queryClient.setQueryData(promptSettingsQueryKey(siteId), settings),
  });
}

/** Prompts shown, subscriptions they brought and conversion per prompt type, over the last 30 days. */
export function usePromptConversionsQuery(siteId: string) {
  return useQuery({
    queryKey: ['sites', siteId, 'analytics', 'prompt-conversions'],
    queryFn: async () => (await apiRequest(`${site(siteId)}/analytics/subscribers`, { schema: subscriberGrowthResponse })).prompts,
  });
}
