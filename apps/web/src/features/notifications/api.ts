import {
  envelope,
  notificationListResponse,
  notificationResponse,
  performanceResponse,
  type Notification,
  type NotificationBody,
  type NotificationStatus,
} from '@herald/contracts';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiDownload, apiRequest, saveFile } from '../../lib/api-client';
import { invalidateSiteAnalytics, siteNotificationsKey } from '../../lib/site-queries';

// Spec §7 Notifications (plus cancel, duplicate, retry from §4) and the
// notification performance call (§7 Analytics). Fetchers and hooks side by
// side; the target select's segments come from lib/segment-options.

/** While a notification is being sent, its progress is fetched this often. */
export const SENDING_POLL_MS = 2000;
/** While a one-time notification is scheduled within the next hour, its status is fetched this often, so the send shows up. */
export const DUE_SOON_POLL_MS = 30_000;
const DUE_SOON_WINDOW_MS = 60 * 60_000;

/**
 * The list's filters (spec §2: all, draft, scheduled, sending, completed;
 * issue 11: plus failed and cancelled, so the counts add up to All).
 * "Completed" holds the sends completed with errors too.
 */
export type StatusFilter = 'all' | Extract<NotificationStatus, 'draft' | 'scheduled' | 'sending' | 'completed' | 'failed' | 'cancelled'>;

/** The statuses a filter shows. */
export const FILTER_STATUSES: Record<Exclude<StatusFilter, 'all'>, NotificationStatus[]> = {
  draft: ['draft'],
  scheduled: ['scheduled'],
  sending: ['sending'],
  completed: ['completed', 'completed_with_errors'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

const notificationsKey = siteNotificationsKey;
export const notificationListKey = (siteId: string, filter: StatusFilter, page: number) => [...notificationsKey(siteId), filter, page] as const;
export const notificationKey = (id: string) => ['notifications', id] as const;
export const performanceKey = (id: string) => ['notifications', id, 'performance'] as const;

const byId = (id: string) => `/notifications/${encodeURIComponent(id)}`;

/** Cards a page of the list shows (docs/product.md, "Notifications list"): the API's default page is 500, too many to read or render at once. */
export const NOTIFICATIONS_PAGE_SIZE = 50;

export function fetchNotifications(siteId: string, filter: StatusFilter, page: number) {
  const params = new URLSearchParams(filter === 'all' ? {} : { status: FILTER_STATUSES[filter].join(',') });
  params.set('page', String(page));
  params.set('limit', String(NOTIFICATIONS_PAGE_SIZE));
  return apiRequest(`/sites/${encodeURIComponent(siteId)}/notifications?${params.toString().replaceAll('%2C', ',')}`, { schema: notificationListResponse });
}

const isSending = (notification: Notification) => notification.status === 'sending';
const isDueSoon = (notification: Notification, now: number) =>
  notification.status === 'scheduled' && notification.scheduled_at !== null && Date.parse(notification.scheduled_at) <= now + DUE_SOON_WINDOW_MS;

/**
 * How often a screen showing these notifications looks again: quickly while
 * one is being sent (progress moves on its own), now and then while a
 * scheduled one is about to go out (its status changes without anyone
 * clicking), otherwise not at all (spec §9: results stay fresh for 5 minutes).
 */
export function pollInterval(notifications: readonly Notification[], now: number = Date.now()): number | false {
  if (notifications.some(isSending)) return SENDING_POLL_MS;
  if (notifications.some((notification) => isDueSoon(notification, now))) return DUE_SOON_POLL_MS;
  return false;
}

export function useNotificationsQuery(siteId: string, filter: StatusFilter, page: number) {
  return useQuery({
    queryKey: notificationListKey(siteId, filter, page),
    queryFn: () => fetchNotifications(siteId, filter, page),
    // The page shown stays while the next page of the same filter loads (no flash of "Loading notifications...").
    placeholderData: (previous, previousQuery) => (previousQuery?.queryKey[3] === filter ? keepPreviousData(previous) : undefined),
    refetchInterval: (query) => pollInterval(query.state.data?.notifications ?? []),
  });
}

export async function fetchNotification(id: string): Promise<Notification> {
  return (await apiRequest(byId(id), { schema: notificationResponse })).notification;
}

export function useNotificationQuery(id: string) {
  return useQuery({
    queryKey: notificationKey(id),
    queryFn: () => fetchNotification(id),
    refetchInterval: (query) => pollInterval(query.state.data ? [query.state.data] : []),
  });
}

export function fetchPerformance(id: string) {
  return apiRequest(`${byId(id)}/performance`, { schema: performanceResponse });
}

/** Downloads the notification's CSV report (one line per delivery) and saves it. */
export async function downloadReport(id: string): Promise<void> {
  const { blob, fileName } = await apiDownload(`${byId(id)}/report.csv`);
  saveFile(blob, fileName ?? `herald-notification-${id}.csv`);
}

export function usePerformanceQuery(id: string, live: boolean) {
  return useQuery({ queryKey: performanceKey(id), queryFn: () => fetchPerformance(id), refetchInterval: live ? SENDING_POLL_MS : false });
}

export async function createNotification(input: { siteId: string; body: NotificationBody }): Promise<Notification> {
  return (await apiRequest(`/sites/${encodeURIComponent(input.siteId)}/notifications`, { method: 'POST', body: input.body, schema: notificationResponse }))
    .notification;
}

/** The form sends every field again (the same payload as create), so a PATCH body is a whole NotificationBody. */
export async function updateNotification(input: { id: string; changes: NotificationBody }): Promise<Notification> {
  return (await apiRequest(byId(input.id), { method: 'PATCH', body: input.changes, schema: notificationResponse })).notification;
}

/**
 * Spec §4 "Recurring schedule: has an active flag": pauses or resumes a
 * recurring notification without touching anything else (the server keeps
 * the schedule; occurrences that fall while paused are not sent).
 */
export async function setRecurringActive(input: { id: string; isActive: boolean }): Promise<Notification> {
  return (await apiRequest(byId(input.id), { method: 'PATCH', body: { recurring_schedule: { is_active: input.isActive } }, schema: notificationResponse }))
    .notification;
}

export function useRecurringActiveMutation() {
  const refresh = useRefreshAfterChange();
  return useMutation({ mutationFn: setRecurringActive, onSuccess: refresh });
}

const deletedResponse = envelope(z.object({ deleted: z.literal(true) }));

export async function deleteNotification(id: string): Promise<void> {
  await apiRequest(byId(id), { method: 'DELETE', schema: deletedResponse });
}

/** The §4 transitions the list and the view offer: send now, cancel, duplicate, retry. */
export type NotificationCommand = 'send' | 'cancel' | 'duplicate' | 'retry';

export async function runNotificationCommand(input: { id: string; command: NotificationCommand }): Promise<Notification> {
  return (await apiRequest(`${byId(input.id)}/${input.command}`, { method: 'POST', schema: notificationResponse })).notification;
}

/**
 * After any change the site's lists (the dashboard's recurring panel too), the
 * notification with its performance, and the dashboard's figures are fetched again.
 */
function useRefreshAfterChange() {
  const queryClient = useQueryClient();
  return (notification: Pick<Notification, 'id' | 'site_id'>) => {
    void queryClient.invalidateQueries({ queryKey: notificationsKey(notification.site_id) });
    void queryClient.invalidateQueries({ queryKey: notificationKey(notification.id) });
    void invalidateSiteAnalytics(queryClient, notification.site_id);
  };
}

export function useCreateNotificationMutation() {
  const refresh = useRefreshAfterChange();
  return useMutation({ mutationFn: createNotification, onSuccess: refresh });
}

export function useUpdateNotificationMutation() {
  const refresh = useRefreshAfterChange();
  return useMutation({ mutationFn: updateNotification, onSuccess: refresh });
}

export function useDeleteNotificationMutation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (notification: Pick<Notification, 'id' | 'site_id'>) => deleteNotification(notification.id),
    onSuccess: (_result, notification) => {
      queryClient.removeQueries({ queryKey: notificationKey(notification.id) });
      void queryClient.invalidateQueries({ queryKey: notificationsKey(notification.site_id) });
      void invalidateSiteAnalytics(queryClient, notification.site_id);
    },
  });
}

export function useNotificationCommandMutation() {
  const refresh = useRefreshAfterChange();
  return useMutation({
    mutationFn: runNotificationCommand,
    onSuccess: (result, input) => {
      refresh(result);
      // Duplicate answers with the copy; the original's view refreshes too.
      if (result.id !== input.id) refresh({ id: input.id, site_id: result.site_id });
    },
  });
}
