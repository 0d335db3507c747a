import type { FailureReason, Notification, NotificationStatus, OutcomeCounts, PushServiceName } from '@herald/contracts';
import type { BadgeTone } from '../ui';

// The outcome model of a send (contracts delivery-outcomes.ts) in the words
// the dashboard uses everywhere: the notifications list and page, the
// dashboard's Recent Notifications and Delivery section, and campaign cards.

/** Spec §4 statuses plus "completed with errors": what each badge says and how it looks. */
export const STATUS_BADGES: Record<NotificationStatus, { label: string; tone: BadgeTone }> = {
  draft: { label: 'Draft', tone: 'neutral' },
  scheduled: { label: 'Scheduled', tone: 'info' },
  sending: { label: 'Sending', tone: 'accent' },
  completed: { label: 'Completed', tone: 'success' },
  completed_with_errors: { label: 'Completed with errors', tone: 'warning' },
  cancelled: { label: 'Cancelled', tone: 'neutral' },
  failed: { label: 'Failed', tone: 'danger' },
};

/** A triggered notification that is armed waits for its event: "Scheduled" would suggest a time. */
export function statusBadgeOf(notification: Pick<Notification, 'status' | 'type'>): { label: string; tone: BadgeTone } {
  if (notification.type === 'TRIGGERED' && notification.status === 'scheduled') return { label: 'Waiting for event', tone: 'info' };
  return STATUS_BADGES[notification.status];
}

export const REASON_LABELS: Record<FailureReason, string> = {
  unreachable: 'Push service unreachable',
  timeout: 'No answer in time',
  rate_limited: 'Rate limited (429)',
  rejected: 'Refused by the push service',
  too_large: 'Message too large',
  gone: 'Subscription expired',
  server_error: 'Push service error (5xx)',
  invalid_subscription: 'Invalid subscription',
};

export const PUSH_SERVICE_LABELS: Record<PushServiceName, string> = {
  fcm: 'Google FCM (Chrome, Edge, Opera)',
  mozilla: 'Mozilla (Firefox)',
  apple: 'Apple (Safari)',
  microsoft: 'Microsoft (legacy Edge)',
  other: 'Other push service',
};

/** The host a push service's endpoints are on, as an owner would look it up in a firewall. */
const PUSH_SERVICE_HOSTS: Record<PushServiceName, string> = {
  fcm: 'fcm.googleapis.com',
  mozilla: 'updates.push.services.mozilla.com',
  apple: 'web.push.apple.com',
  microsoft: '*.notify.windows.com',
  other: 'the push service',
};

/** What to do about a group of failures: one sentence, naming the push service's host. */
export function nextStep(reason: FailureReason, service: PushServiceName): string {
  const host = PUSH_SERVICE_HOSTS[service];
  switch (reason) {
    case 'unreachable':
      return `Herald cannot reach ${host} from this server: check outbound HTTPS (port 443) and DNS.`;
    case 'timeout':
      return `${capitalise(host)} did not answer in time: check this server's outbound connection and proxy; Retry sends these again.`;
    case 'rate_limited':
      return `${capitalise(host)} asked Herald to slow down on every attempt: send to fewer people at a time, or Retry later.`;
    case 'rejected':
      return `${capitalise(host)} refused Herald's request, usually its VAPID signature: check the site's VAPID keys and contact address in Settings. A "VAPID key mismatch" means these browsers subscribed with another key and must subscribe again.`;
    case 'too_large':
      return 'The message is too large for a push message: shorten the title, message or links.';
    case 'server_error':
      return `${capitalise(host)} had an internal error on every attempt; this usually passes: Retry later.`;
    case 'invalid_subscription':
      return `${capitalise(host)} says these subscriptions are invalid: Herald deactivated those subscribers; nothing else to do.`;
    case 'gone':
      return 'These browsers unsubscribed or their subscriptions expired: Herald deactivated them; nothing else to do.';
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const integer = new Intl.NumberFormat('en-US');
const percent = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export const formatCount = (value: number) => integer.format(value);

/**
 * `part` of `whole` as "36%" (one decimal at most); "0%" of nothing. Never
 * rounded to a figure that says something else: one failure in 20,000 is
 * "<0.1%", not "0%", and all but one ">99.9%", not "100%".
 */
export function shareText(part: number, whole: number): string {
  if (whole > 0 && part > 0 && (part / whole) * 100 < 0.05) return '<0.1%';
  if (whole > 0 && part < whole && (part / whole) * 100 >= 99.95) return '>99.9%';
  return `${percent.format(whole > 0 ? (part / whole) * 100 : 0)}%`;
}

/** Deliveries that are done: accepted, failed, expired or skipped. */
export const doneOf = (counts: OutcomeCounts) => counts.sent + counts.failed + counts.expired + counts.skipped;
