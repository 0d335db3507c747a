import {
  installCheckResponse,
  setupChecklistResponse,
  testDeviceLinkResponse,
  testDevicesResponse,
  testSendResponse,
  type InstallCheckResult,
  type SetupChecklist,
  type TestSendContentBody,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { apiRequest } from '../../lib/api-client';
import { invalidateSiteAnalytics } from '../../lib/site-queries';

// The setup checklist (issue 12): its state, the install check, test-device
// links and a test push to the owner's own devices. Fetchers and hooks side by side.

export const checklistQueryKey = (siteId: string) => ['sites', siteId, 'checklist'] as const;
export const testDevicesQueryKey = (siteId: string) => ['sites', siteId, 'test-devices'] as const;

/** How often the checklist looks again while it waits (the first subscriber, a test device). */
export const CHECKLIST_POLL_MS = 3000;

const site = (siteId: string) => `/sites/${encodeURIComponent(siteId)}`;

export async function fetchChecklist(siteId: string): Promise<SetupChecklist> {
  return (await apiRequest(`${site(siteId)}/checklist`, { schema: setupChecklistResponse })).checklist;
}

export function checklistSteps(checklist: SetupChecklist) {
  const checks = checklist.install_check?.checks ?? [];
  const passed = (id: string) => checks.some((check) => check.id === id && check.ok);
  const subscribed = checklist.first_subscriber_at !== null;
  return {
    // The code is in place once the check found it, or a browser subscribed through it.
    code: subscribed || (passed('snippet') && passed('service_worker')),
    check: checklist.install_check?.passed === true,
    subscriber: subscribed,
    test: checklist.test_devices > 0 && checklist.test_sent_at !== null,
  };
}

/** Polls while a step waits on something outside the dashboard (a visitor subscribing, a browser claiming a link). */
export function useChecklistQuery(siteId: string, options: { poll: (checklist: SetupChecklist) => boolean }) {
  const query = useQuery({
    queryKey: checklistQueryKey(siteId),
    queryFn: () => fetchChecklist(siteId),
    refetchInterval: (query) => {
      const data = query.state.data;
      if (!data || !options.poll(data)) return false;
      const steps = checklistSteps(data);
      return steps.subscriber && steps.test ? false : CHECKLIST_POLL_MS;
    },
    staleTime: 0,
  });
  useRefreshFiguresOnNewSubscribers(siteId, query.data?.active_subscribers);
  return query;
}

/**
 * The checklist polls while the dashboard's figures stay cached for 5 minutes
 * (spec §9): when the poll sees the number of subscribers change, the figures
 * and the subscriber list are fetched again, so "1 active now" never stands
 * beside a "Total Subscribers 0" card.
 */
function useRefreshFiguresOnNewSubscribers(siteId: string, activeSubscribers: number | undefined) {
  const queryClient = useQueryClient();
  const seen = useRef<{ siteId: string; count: number } | null>(null);
  useEffect(() => {
    if (activeSubscribers === undefined) return;
    const before = seen.current;
    seen.current = { siteId, count: activeSubscribers };
    if (before && before.siteId === siteId && before.count !== activeSubscribers) {
      void invalidateSiteAnalytics(queryClient, siteId);
      void queryClient.invalidateQueries({ queryKey: ['sites', siteId, 'subscribers'] });
    }
  }, [activeSubscribers, siteId, queryClient]);
}

export function useDismissChecklistMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (dismissed: boolean) =>
      (await apiRequest(`${site(siteId)}/checklist`, { method: 'PATCH', body: { dismissed }, schema: setupChecklistResponse })).checklist,
    onSuccess: (checklist) => queryClient.setQueryData(checklistQueryKey(siteId), checklist),
  });
}

export function useInstallCheckMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (): Promise<InstallCheckResult> => apiRequest(`${site(siteId)}/install-check`, { method: 'POST', schema: installCheckResponse }),
    onSuccess: (result) =>
      queryClient.setQueryData<SetupChecklist>(checklistQueryKey(siteId), (checklist) => (checklist ? { ...checklist, install_check: result } : checklist)),
  });
}

export function useTestDeviceLinkMutation(siteId: string) {
  return useMutation({
    mutationFn: async () => (await apiRequest(`${site(siteId)}/test-devices/link`, { method: 'POST', schema: testDeviceLinkResponse })).link,
  });
}

export function useTestDevicesQuery(siteId: string, options: { poll: boolean }) {
  return useQuery({
    queryKey: testDevicesQueryKey(siteId),
    queryFn: async () => (await apiRequest(`${site(siteId)}/test-devices`, { schema: testDevicesResponse })).devices,
    refetchInterval: (query) => (options.poll && !query.state.data?.length ? CHECKLIST_POLL_MS : false),
    staleTime: 0,
  });
}

/** A test push of this content to the site's test devices; it counts nowhere. */
export function useSendTestMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (content: TestSendContentBody) =>
      (await apiRequest(`${site(siteId)}/notifications/test`, { method: 'POST', body: content, schema: testSendResponse })).test,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: checklistQueryKey(siteId) }),
  });
}

/** "Send test" of a saved notification: its content as saved, to the site's test devices only. */
export function useSendNotificationTestMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (notificationId: string) =>
      (await apiRequest(`/notifications/${encodeURIComponent(notificationId)}/test`, { method: 'POST', schema: testSendResponse })).test,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: checklistQueryKey(siteId) }),
  });
}
