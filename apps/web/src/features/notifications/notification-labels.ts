import type { Notification, NotificationStatus, NotificationType, RecurringInterval } from '@herald/contracts';

export const TYPE_LABELS: Record<NotificationType, string> = {
  ONE_TIME: 'One-time',
  RECURRING: 'Recurring',
  TRIGGERED: 'Triggered',
};

const INTERVAL_UNITS: Record<RecurringInterval, [singular: string, plural: string]> = {
  DAILY: ['day', 'days'],
  WEEKLY: ['week', 'weeks'],
  MONTHLY: ['month', 'months'],
};

export const INTERVAL_LABELS: Record<RecurringInterval, string> = { DAILY: 'Daily', WEEKLY: 'Weekly', MONTHLY: 'Monthly' };

export function intervalUnit(interval: RecurringInterval, count: number): string {
  const [one, many] = INTERVAL_UNITS[interval];
  return count === 1 ? one : many;
}

/** Spec §2 Notifications list: "Repeats every N {interval}". */
export function repeatsText(schedule: NonNullable<Notification['recurringSchedule']>): string {
  return `Repeats every ${schedule.intervalValue} ${intervalUnit(schedule.intervalType, schedule.intervalValue)}`;
}

export function delayText(minutes: number): string {
  if (minutes === 0) return 'immediately';
  if (minutes % 1440 === 0) return `after ${minutes / 1440} ${minutes === 1440 ? 'day' : 'days'}`;
  if (minutes % 60 === 0) return `after ${minutes / 60} ${minutes === 60 ? 'hour' : 'hours'}`;
  return `after ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
}

/** A triggered notification's rule in words: `When "signup" happens, sent after 15 minutes`. */
export function triggerText(trigger: NonNullable<Notification['trigger']>): string {
  return `When “${trigger.event}” happens, sent ${delayText(trigger.delay_minutes)}`;
}

/** "Fired 3 times": how often a triggered notification's event sent it. */
export function firedText(count: number): string {
  return count === 0 ? 'Not fired yet' : `Fired ${count === 1 ? 'once' : `${new Intl.NumberFormat('en-US').format(count)} times`}`;
}

/** Spec §4: draft and scheduled notifications are editable; the others are view-only. */
export const isEditable = (status: NotificationStatus) => status === 'draft' || status === 'scheduled';

/** The host shown in previews and summaries ("shop.example.com"), or null for an incomplete URL. */
export function hostOf(url: string): string | null {
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.host : null;
  } catch {
    return null;
  }
}

const numberFormat = new Intl.NumberFormat('en-US');
export const formatCount = (value: number) => numberFormat.format(value);
export const formatPercent = (value: number) => `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(value)}%`;
