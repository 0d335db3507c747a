import type { Notification } from '@herald/contracts';

const MINUTE_MS = 60_000;

/**
 * When a throttled send should finish (docs/delivery.md, "Throttled sends"),
 * from its audience and its rate: at most N pushes a minute from its start,
 * so its last minute starts ⌈targeted ÷ N⌉ − 1 minutes after it began, and
 * no sooner than what is still pending needs from now. An estimate: retries
 * take places in later minutes, and a one-time send's start is the first
 * push accepted (`sent_at`). Null when it is not a throttled send in progress.
 */
export function expectedFinishAt(
  notification: Pick<Notification, 'status' | 'type' | 'throttle_per_minute' | 'sent_at' | 'counts'>,
  now: number,
): number | null {
  const perMinute = notification.throttle_per_minute;
  const { pending, targeted } = notification.counts;
  if (perMinute === null || notification.status !== 'sending' || pending <= 0) return null;
  const fromNow = now + (Math.ceil(pending / perMinute) - 1) * MINUTE_MS;
  // A recurring notification's counts add up all its occurrences: only what is pending says anything.
  if (notification.type !== 'ONE_TIME' || notification.sent_at === null) return fromNow;
  const fromStart = Date.parse(notification.sent_at) + (Math.ceil(targeted / perMinute) - 1) * MINUTE_MS;
  return Math.max(fromStart, fromNow);
}
