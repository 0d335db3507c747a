import { retireVapidKeyResponse, vapidKeyResponse, vapidKeysResponse, type ImportVapidKeyBody, type VapidKey } from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';

// Settings → VAPID Keys: a site's key pairs (admins and owners), with the active
// subscribers of each. Private keys never reach the dashboard.

export const vapidKeysQueryKey = (siteId: string) => ['sites', siteId, 'vapid-keys'] as const;

const keysPath = (siteId: string) => `/sites/${encodeURIComponent(siteId)}/vapid-keys`;

export async function fetchVapidKeys(siteId: string): Promise<VapidKey[]> {
  return (await apiRequest(keysPath(siteId), { schema: vapidKeysResponse })).keys;
}

export function useVapidKeysQuery(siteId: string, enabled: boolean) {
  return useQuery({ queryKey: vapidKeysQueryKey(siteId), queryFn: () => fetchVapidKeys(siteId), enabled });
}

export function useImportVapidKeyMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ImportVapidKeyBody) => (await apiRequest(keysPath(siteId), { method: 'POST', body, schema: vapidKeyResponse })).key,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: vapidKeysQueryKey(siteId) }),
  });
}

/** A new primary key changes the site (its vapid_public_key) and its installation code: everything of the site is read again. */
export function useMakePrimaryVapidKeyMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (keyId: string) =>
      (await apiRequest(`${keysPath(siteId)}/${encodeURIComponent(keyId)}/primary`, { method: 'POST', schema: vapidKeyResponse })).key,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['sites'] }),
  });
}

export function useRetireVapidKeyMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (keyId: string) => {
      await apiRequest(`${keysPath(siteId)}/${encodeURIComponent(keyId)}`, { method: 'DELETE', schema: retireVapidKeyResponse });
    },
    onSuccess: (_result, keyId) => {
      queryClient.setQueryData<VapidKey[]>(vapidKeysQueryKey(siteId), (keys) => keys?.filter((key) => key.id !== keyId));
    },
  });
}
