// Local calendar days over the hourly rollup. stats_hourly holds UTC hours;
// the dashboard speaks in days of the SITE's timezone (spec §7: "date" is a
// day where the site is). A local day is a run of whole UTC hours:
//
//   An hour counts for the local day in which it starts.
//
// With whole-hour offsets (almost every zone) that is exact, daylight-saving
// days included (they simply hold 23 or 25 hours). In zones with a :30 or :45
// offset (Asia/Kolkata, Asia/Kathmandu, Australia/Adelaide, America/St_Johns)
// the hour that straddles local midnight counts for the day that is ending, so
// the first 30 or 45 minutes after midnight are shown on the previous day. The
// rule never puts the running hour on tomorrow, so "today" always holds it.
import { HOUR_MS, hourStart } from './site-counters';
import { instantOfWallTime, wallTimeOf } from '@herald/contracts';

/** A calendar date, "YYYY-MM-DD". */
export type LocalDate = string;

const DAY_MS = 86_400_000;

function civil(date: LocalDate): { year: number; month: number; day: number } {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return { year, month, day };
}

function civilMillis(date: LocalDate): number {
  const { year, month, day } = civil(date);
  return Date.UTC(year, month - 1, day);
}

function formatCivil(millis: number): LocalDate {
  return new Date(millis).toISOString().slice(0, 10);
}

/** The calendar date an instant falls on in a timezone. */
export function localDateOf(millis: number, timeZone: string): LocalDate {
  const w = wallTimeOf(millis, timeZone);
  return `${String(w.year).padStart(4, '0')}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

export function addDays(date: LocalDate, days: number): LocalDate {
  return formatCivil(civilMillis(date) + days * DAY_MS);
}

/** Whole days from `from` to `to` (0 when equal, negative when `to` is earlier). */
export function daysBetween(from: LocalDate, to: LocalDate): number {
  return Math.round((civilMillis(to) - civilMillis(from)) / DAY_MS);
}

/** 0 = Monday … 6 = Sunday (ISO 8601). */
export function weekdayIndex(date: LocalDate): number {
  return (new Date(civilMillis(date)).getUTCDay() + 6) % 7;
}

/** The first UTC hour bucket of a local day: the first hour starting at or after its midnight. */
export function firstHourOfDay(date: LocalDate, timeZone: string): number {
  const { year, month, day } = civil(date);
  const midnight = instantOfWallTime({ year, month, day, hour: 0, minute: 0, second: 0 }, timeZone);
  return Math.ceil(midnight / HOUR_MS) * HOUR_MS;
}

/** The local day whose hours hold the running hour of `now` (see the rule above). */
export function todayOf(now: number, timeZone: string): LocalDate {
  const today = localDateOf(now, timeZone);
  // In a :30/:45 zone, the half hour after midnight still belongs to yesterday.
  return hourStart(now) < firstHourOfDay(today, timeZone) ? addDays(today, -1) : today;
}

/**
 * Consecutive local days `first`…`last` and their hour buckets: day i holds
 * the hours in [starts[i], starts[i + 1]).
 */
export class LocalDayRange {
  readonly dates: LocalDate[];
  private readonly starts: number[];

  constructor(
    readonly first: LocalDate,
    readonly last: LocalDate,
    readonly timeZone: string,
  ) {
    const count = daysBetween(first, last) + 1;
    this.dates = Array.from({ length: Math.max(0, count) }, (_, i) => addDays(first, i));
    this.starts = [...this.dates, addDays(last, 1)].map((date) => firstHourOfDay(date, timeZone));
  }

  /** The first hour bucket of the range. */
  get firstHour(): number {
    return this.starts[0]!;
  }

  /** The first hour bucket after the range. */
  get endHour(): number {
    return this.starts[this.starts.length - 1]!;
  }

  /** The index of the day holding an hour bucket, or -1 outside the range. */
  dayIndexOf(hour: number): number {
    if (hour < this.firstHour || hour >= this.endHour) return -1;
    let low = 0;
    let high = this.dates.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= hour) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}
