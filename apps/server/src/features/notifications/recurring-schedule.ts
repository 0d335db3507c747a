// When a recurring notification's occurrences fall (spec §2 notification form
// RECURRING mode, §3 recurringSchedule). Pure functions: no database, no clock.
//
// Occurrence k is the start's wall time plus k intervals, in the schedule's
// timezone, computed from the start every time (never by adding to the
// previous occurrence):
// - DAILY / WEEKLY keep the local clock time across daylight-saving changes
//   ("09:00 every day" is 09:00 in winter and in summer);
// - MONTHLY keeps the start's day of the month, or the last day of a shorter
//   month: from Jan 31 → Feb 28 (29) → Mar 31 → Apr 30 → May 31;
// - a wall time that does not exist (spring-forward gap) or exists twice
//   (fall-back overlap) follows instantOfWallTime: after the gap, first of the two.
import { daysInMonth, instantOfWallTime, parseDateTimeInZone, wallTimeOf, type RecurringInterval, type WallTime } from '@herald/contracts';

const DAY_MS = 86_400_000;
/** The average Gregorian month, only to guess an index before checking it exactly. */
const AVERAGE_MONTH_MS = 30.436875 * DAY_MS;

export interface ScheduleTiming {
  intervalType: RecurringInterval;
  intervalValue: number;
  timezone: string;
  /** The first occurrence as a wall time in `timezone`. */
  start: WallTime;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** "2026-03-29T09:00:00": how a schedule's start wall time is stored. */
export function formatWallTime(wall: WallTime): string {
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}`;
}

export function parseWallTime(value: string): WallTime {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(value);
  if (!match) throw new Error(`Not a stored wall time: ${value}`);
  const [, year, month, day, hour, minute, second] = match.map(Number);
  return { year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second: second! };
}

function addDays(wall: WallTime, days: number): WallTime {
  const date = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + days));
  return { ...wall, year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

function addMonths(wall: WallTime, months: number): WallTime {
  const total = wall.year * 12 + (wall.month - 1) + months;
  const year = Math.floor(total / 12);
  const month = (total % 12) + 1;
  return { ...wall, year, month, day: Math.min(wall.day, daysInMonth(year, month)) };
}

/** The wall time of occurrence `index` (0 is the start). */
export function occurrenceWallTime(timing: ScheduleTiming, index: number): WallTime {
  const steps = index * timing.intervalValue;
  switch (timing.intervalType) {
    case 'DAILY':
      return addDays(timing.start, steps);
    case 'WEEKLY':
      return addDays(timing.start, 7 * steps);
    case 'MONTHLY':
      return addMonths(timing.start, steps);
  }
}

/** The instant of occurrence `index`. */
export function occurrenceAt(timing: ScheduleTiming, index: number): number {
  return instantOfWallTime(occurrenceWallTime(timing, index), timing.timezone);
}

function approximateIntervalMs(timing: ScheduleTiming): number {
  const unit = timing.intervalType === 'DAILY' ? DAY_MS : timing.intervalType === 'WEEKLY' ? 7 * DAY_MS : AVERAGE_MONTH_MS;
  return unit * timing.intervalValue;
}

/**
 * The largest index ≥ `fromIndex` whose occurrence is at or before `instant`,
 * or undefined when occurrence `fromIndex` is still ahead. Guesses from the
 * average interval, then corrects exactly, so a jump of years costs a few
 * steps, not one per missed occurrence.
 */
export function lastOccurrenceIndexAtOrBefore(timing: ScheduleTiming, instant: number, fromIndex: number): number | undefined {
  const first = occurrenceAt(timing, fromIndex);
  if (first > instant) return undefined;
  let index = fromIndex + Math.max(0, Math.floor((instant - first) / approximateIntervalMs(timing)));
  while (index > fromIndex && occurrenceAt(timing, index) > instant) index--;
  while (occurrenceAt(timing, index + 1) <= instant) index++;
  return index;
}

/** The smallest index ≥ `fromIndex` whose occurrence is at or after `instant`. */
export function firstOccurrenceIndexAtOrAfter(timing: ScheduleTiming, instant: number, fromIndex = 0): number {
  const last = lastOccurrenceIndexAtOrBefore(timing, instant, fromIndex);
  if (last === undefined) return fromIndex;
  return occurrenceAt(timing, last) === instant ? last : last + 1;
}

// ---------------------------------------------------------------------------
// Reading `recurring_schedule` from the API.

/** A schedule's timing as stored, whichever way it was entered. */
export interface ScheduleSettings {
  intervalType: RecurringInterval;
  intervalValue: number;
  timezone: string;
  /** formatWallTime of the first occurrence. */
  startLocal: string;
  startAt: number;
  endAt: number | null;
}

export interface ScheduleInput {
  interval_type?: RecurringInterval;
  interval_value?: number;
  start_date?: string;
  end_date?: string | null;
}

export class ScheduleInputError extends Error {}

const LOCAL_INPUT = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?$/;

/**
 * A date-time from the API as a wall time and an instant: a value without an
 * offset is a wall time in `timeZone` (kept as typed, even inside a DST gap);
 * a value with one is an instant, whose wall time in `timeZone` is used.
 */
function readDateTime(value: string, timeZone: string, field: string): { wall: WallTime; at: number } {
  const at = parseDateTimeInZone(value, timeZone);
  if (at === undefined) throw new ScheduleInputError(`${field}: must be a date and time such as 2026-12-01T09:00`);
  const local = LOCAL_INPUT.exec(value.trim());
  if (!local) return { wall: wallTimeOf(at, timeZone), at };
  const [, year, month, day, hour, minute, second] = local;
  return { wall: { year: Number(year), month: Number(month), day: Number(day), hour: Number(hour), minute: Number(minute), second: Number(second ?? 0) }, at };
}

/**
 * Merges a (possibly partial) schedule from the API over the stored one.
 * A new start date is read in the site's timezone, which the schedule then
 * keeps; without one, the stored start and timezone stay.
 */
export function readScheduleInput(input: ScheduleInput, stored: ScheduleSettings | undefined, siteTimezone: string): ScheduleSettings {
  const intervalType = input.interval_type ?? stored?.intervalType;
  if (!intervalType) throw new ScheduleInputError('Repeat (interval_type) is required');
  const intervalValue = input.interval_value ?? stored?.intervalValue;
  if (intervalValue === undefined) throw new ScheduleInputError('Repeat every (interval_value) is required');

  let start: Pick<ScheduleSettings, 'timezone' | 'startLocal' | 'startAt'>;
  if (input.start_date !== undefined) {
    const read = readDateTime(input.start_date, siteTimezone, 'Start date');
    // The stored start given back as read (GET answers it as an instant): the wall time typed stays, also one inside
    // a DST gap (02:30 on a spring-forward night answered as 03:30), or every later occurrence would move an hour.
    const unchanged = stored !== undefined && stored.timezone === siteTimezone && read.at === stored.startAt;
    start = unchanged ? { timezone: stored.timezone, startLocal: stored.startLocal, startAt: stored.startAt } : { timezone: siteTimezone, startLocal: formatWallTime(read.wall), startAt: read.at };
  } else if (stored) {
    start = { timezone: stored.timezone, startLocal: stored.startLocal, startAt: stored.startAt };
  } else {
    throw new ScheduleInputError('Start date is required');
  }

  let endAt: number | null;
  if (input.end_date !== undefined) endAt = input.end_date ? readDateTime(input.end_date, start.timezone, 'End date').at : null;
  else endAt = stored?.endAt ?? null;
  if (endAt !== null && endAt <= start.startAt) throw new ScheduleInputError('End date must be after the start date');

  return { intervalType, intervalValue, ...start, endAt };
}

export function sameScheduleSettings(a: ScheduleSettings, b: ScheduleSettings): boolean {
  return (
    a.intervalType === b.intervalType &&
    a.intervalValue === b.intervalValue &&
    a.timezone === b.timezone &&
    a.startLocal === b.startLocal &&
    a.startAt === b.startAt &&
    a.endAt === b.endAt
  );
}

export function timingOfSettings(settings: ScheduleSettings): ScheduleTiming {
  return { intervalType: settings.intervalType, intervalValue: settings.intervalValue, timezone: settings.timezone, start: parseWallTime(settings.startLocal) };
}

/**
 * The first occurrence to send, at or after `notBefore` and from `fromIndex`
 * on, or undefined when the end date comes first.
 */
export function nextOccurrence(settings: ScheduleSettings, notBefore: number, fromIndex = 0): { index: number; at: number } | undefined {
  const timing = timingOfSettings(settings);
  const index = firstOccurrenceIndexAtOrAfter(timing, notBefore, fromIndex);
  const at = occurrenceAt(timing, index);
  if (settings.endAt !== null && at > settings.endAt) return undefined;
  return { index, at };
}
