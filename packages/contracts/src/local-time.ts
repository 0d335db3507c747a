// Local-time delivery and quiet hours (issue 14 items 1 and 4; docs/product.md,
// "Local-time delivery" and "Quiet hours"; docs/delivery.md, same sections):
// the request shapes, and the wall-clock rules the server plans sends with and
// the dashboard explains them with. Zone arithmetic is wall-time.ts's.
import { z } from 'zod';
import { instantOfWallTime, wallTimeOf } from './wall-time';

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** A wall-clock time of day, "HH:MM" on a 24-hour clock. */
export const timeOfDay = (field: string) =>
  z.string({ message: `${field} must be a time such as 09:00` }).regex(HH_MM, `${field} must be a time of day as HH:MM (00:00 to 23:59)`);

export const DELIVERY_MODES = ['at_once', 'subscriber_local_time'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];

/**
 * How a send reaches its audience: all at once, or at `local_time` in each
 * subscriber's time zone (subscribers without one use the site's).
 */
export const notificationDelivery = z
  .object({
    mode: z.enum(DELIVERY_MODES, { message: 'delivery.mode must be at_once or subscriber_local_time' }),
    local_time: timeOfDay('delivery.local_time').optional(),
  })
  .strict()
  .superRefine((value, context) => {
    if (value.mode === 'subscriber_local_time' && value.local_time === undefined) {
      context.addIssue({ code: 'custom', path: ['local_time'], message: 'delivery.local_time is required for subscriber_local_time (HH:MM)' });
    }
    if (value.mode === 'at_once' && value.local_time !== undefined) {
      context.addIssue({ code: 'custom', path: ['local_time'], message: 'delivery.local_time is only for subscriber_local_time' });
    }
  });
export type NotificationDelivery = z.infer<typeof notificationDelivery>;

/** What a notification reads back: the delivery it was given (local_time null when at once). */
export const notificationDeliveryResponse = z.object({ mode: z.enum(DELIVERY_MODES), local_time: z.string().nullable() });

/** A local-time send's progress: its zones, and how many of them have been sent (their run finished). */
export const localTimeProgress = z.object({ zones: z.number(), zones_sent: z.number() });
export type LocalTimeProgress = z.infer<typeof localTimeProgress>;

/**
 * The quiet-hours window with its fields named as its reader knows them: the
 * API's messages say "quietHours.start", Settings' say "From" and "Until".
 * One set of rules for both.
 */
export function quietHoursNamed(names: { start: string; end: string }) {
  return z
    .object({ start: timeOfDay(names.start), end: timeOfDay(names.end) })
    .strict()
    .refine((value) => value.start !== value.end, { message: `${names.start} and ${names.end} must differ`, path: ['end'] });
}

/** Per site: non-urgent pushes due inside this window (each subscriber's local time) wait until it ends. */
export const quietHours = quietHoursNamed({ start: 'quietHours.start', end: 'quietHours.end' });
export type QuietHours = z.infer<typeof quietHours>;

function minutesOf(hhmm: string): number {
  const match = HH_MM.exec(hhmm);
  if (!match) throw new Error(`not a time of day: ${hhmm}`);
  return Number(match[1]) * 60 + Number(match[2]);
}

/**
 * The first instant at or after `after` at which the zone's clocks show
 * `hhmm` (today's if still ahead, else tomorrow's). DST-correct: a time that a
 * spring-forward gap skips runs one offset later (wall-time.ts).
 */
export function nextWallTimeAfter(after: number, hhmm: string, timeZone: string): number {
  const minutes = minutesOf(hhmm);
  const today = wallTimeOf(after, timeZone);
  for (let dayOffset = 0; dayOffset <= 2; dayOffset++) {
    const day = new Date(Date.UTC(today.year, today.month - 1, today.day + dayOffset));
    const at = instantOfWallTime(
      { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate(), hour: Math.floor(minutes / 60), minute: minutes % 60, second: 0 },
      timeZone,
    );
    if (at >= after) return at;
  }
  throw new Error(`no ${hhmm} in ${timeZone} within two days`);
}

/** Whether `at` falls inside the window in that zone; a window whose start is after its end wraps midnight (22:00–08:00). */
export function insideQuietHours(at: number, window: QuietHours, timeZone: string): boolean {
  const wall = wallTimeOf(at, timeZone);
  const now = wall.hour * 60 + wall.minute;
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  return start < end ? now >= start && now < end : now >= start || now < end;
}

/** When a window that `at` is inside ends in that zone: the next `end` wall time. */
export function quietHoursEndAfter(at: number, window: QuietHours, timeZone: string): number {
  return nextWallTimeAfter(at, window.end, timeZone);
}
