import { describe, expect, it } from 'vitest';
import { LocalDayRange, addDays, daysBetween, firstHourOfDay, todayOf, weekdayIndex } from '../src/features/analytics/local-days';

// Local days over UTC hour buckets (features/analytics/local-days.ts): an hour
// counts for the local day in which it starts.

const at = (iso: string) => Date.parse(iso);
const H = 3_600_000;

describe('local days over hourly buckets', () => {
  it('whole-hour zones: a day is exactly its local midnight to the next', () => {
    const tokyo = new LocalDayRange('2026-05-10', '2026-05-11', 'Asia/Tokyo');
    expect(tokyo.firstHour).toBe(at('2026-05-09T15:00:00Z'));
    expect(tokyo.endHour).toBe(at('2026-05-11T15:00:00Z'));
    expect(tokyo.dayIndexOf(at('2026-05-10T14:00:00Z'))).toBe(0); // 23:00 Sunday
    expect(tokyo.dayIndexOf(at('2026-05-10T15:00:00Z'))).toBe(1); // 00:00 Monday
    expect(tokyo.dayIndexOf(at('2026-05-09T14:00:00Z'))).toBe(-1);
    expect(tokyo.dayIndexOf(at('2026-05-11T15:00:00Z'))).toBe(-1);
  });

  it('daylight-saving days hold 23 and 25 hours', () => {
    const spring = new LocalDayRange('2026-03-08', '2026-03-08', 'America/New_York');
    expect((spring.endHour - spring.firstHour) / H).toBe(23);
    expect(spring.firstHour).toBe(at('2026-03-08T05:00:00Z'));
    const autumn = new LocalDayRange('2026-11-01', '2026-11-01', 'America/New_York');
    expect((autumn.endHour - autumn.firstHour) / H).toBe(25);
  });

  it(':30 and :45 zones: the hour straddling midnight counts for the day that is ending', () => {
    // Asia/Kolkata is UTC+5:30: local midnight of 05-11 is 18:30 UTC on 05-10.
    expect(firstHourOfDay('2026-05-11', 'Asia/Kolkata')).toBe(at('2026-05-10T19:00:00Z'));
    const india = new LocalDayRange('2026-05-10', '2026-05-11', 'Asia/Kolkata');
    expect(india.dayIndexOf(at('2026-05-10T18:00:00Z'))).toBe(0); // 23:30–00:30: Sunday
    expect(india.dayIndexOf(at('2026-05-10T19:00:00Z'))).toBe(1); // 00:30–01:30: Monday
    // Asia/Kathmandu is UTC+5:45.
    expect(firstHourOfDay('2026-05-11', 'Asia/Kathmandu')).toBe(at('2026-05-10T19:00:00Z'));
    // Newfoundland is UTC−2:30 in summer: local midnight is 02:30 UTC.
    expect(firstHourOfDay('2026-07-01', 'America/St_Johns')).toBe(at('2026-07-01T03:00:00Z'));
  });

  it('"today" always holds the running hour', () => {
    expect(todayOf(at('2026-05-13T10:30:00Z'), 'Asia/Tokyo')).toBe('2026-05-13');
    expect(todayOf(at('2026-05-13T15:10:00Z'), 'Asia/Tokyo')).toBe('2026-05-14');
    // 00:10 in Kolkata: the running hour began at 23:30 yesterday, so it is still yesterday's.
    expect(todayOf(at('2026-05-10T18:40:00Z'), 'Asia/Kolkata')).toBe('2026-05-10');
    expect(todayOf(at('2026-05-10T19:05:00Z'), 'Asia/Kolkata')).toBe('2026-05-11');
    expect(todayOf(at('2026-05-10T23:59:00Z'), 'UTC')).toBe('2026-05-10');
  });

  it('calendar arithmetic and weekdays', () => {
    expect(addDays('2026-02-27', 2)).toBe('2026-03-01');
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
    expect(daysBetween('2026-05-01', '2026-05-13')).toBe(12);
    expect(daysBetween('2026-05-13', '2026-05-01')).toBe(-12);
    expect(weekdayIndex('2026-05-11')).toBe(0); // Monday
    expect(weekdayIndex('2026-05-10')).toBe(6); // Sunday
    expect(new LocalDayRange('2026-05-07', '2026-05-13', 'UTC').dates).toEqual([
      '2026-05-07',
      '2026-05-08',
      '2026-05-09',
      '2026-05-10',
      '2026-05-11',
      '2026-05-12',
      '2026-05-13',
    ]);
  });
});
