import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  firstOccurrenceIndexAtOrAfter,
  lastOccurrenceIndexAtOrBefore,
  nextOccurrence,
  occurrenceAt,
  readScheduleInput,
  ScheduleInputError,
  type ScheduleTiming,
} from '../src/features/notifications/recurring-schedule';
import type { RecurringInterval } from '@herald/contracts';

// Spec §2/§3 recurring schedules: occurrence k = start + k × interval in LOCAL
// wall time of the schedule's timezone, computed from the start each time.

const timing = (intervalType: RecurringInterval, intervalValue: number, timezone: string, start: string): ScheduleTiming => {
  const [date, time] = start.split('T') as [string, string];
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  return { intervalType, intervalValue, timezone, start: { year, month, day, hour, minute, second: 0 } };
};

const isoOf = (t: ScheduleTiming, count: number) => Array.from({ length: count }, (_, k) => new Date(occurrenceAt(t, k)).toISOString());

describe('occurrences keep the local clock time across daylight-saving changes', () => {
  it('daily in Europe/Paris across spring forward (2026-03-29) and fall back (2026-10-25)', () => {
    expect(isoOf(timing('DAILY', 1, 'Europe/Paris', '2026-03-27T09:00'), 4)).toEqual([
      '2026-03-27T08:00:00.000Z',
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
    expect(isoOf(timing('DAILY', 1, 'Europe/Paris', '2026-10-23T09:00'), 4)).toEqual([
      '2026-10-23T07:00:00.000Z',
      '2026-10-24T07:00:00.000Z',
      '2026-10-25T08:00:00.000Z',
      '2026-10-26T08:00:00.000Z',
    ]);
  });

  it('daily in America/New_York across 2026-03-08 and 2026-11-01', () => {
    expect(isoOf(timing('DAILY', 1, 'America/New_York', '2026-03-07T09:00'), 3)).toEqual([
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ]);
    expect(isoOf(timing('DAILY', 1, 'America/New_York', '2026-10-31T09:00'), 3)).toEqual([
      '2026-10-31T13:00:00.000Z',
      '2026-11-01T14:00:00.000Z',
      '2026-11-02T14:00:00.000Z',
    ]);
  });

  it('weekly in both zones across both changes', () => {
    expect(isoOf(timing('WEEKLY', 1, 'Europe/Paris', '2026-03-23T18:30'), 2)).toEqual(['2026-03-23T17:30:00.000Z', '2026-03-30T16:30:00.000Z']);
    expect(isoOf(timing('WEEKLY', 1, 'Europe/Paris', '2026-10-19T18:30'), 2)).toEqual(['2026-10-19T16:30:00.000Z', '2026-10-26T17:30:00.000Z']);
    expect(isoOf(timing('WEEKLY', 1, 'America/New_York', '2026-03-02T09:00'), 2)).toEqual(['2026-03-02T14:00:00.000Z', '2026-03-09T13:00:00.000Z']);
    expect(isoOf(timing('WEEKLY', 1, 'America/New_York', '2026-10-26T09:00'), 2)).toEqual(['2026-10-26T13:00:00.000Z', '2026-11-02T14:00:00.000Z']);
  });

  it('monthly across both changes keeps 09:00 local', () => {
    expect(isoOf(timing('MONTHLY', 1, 'Europe/Paris', '2026-02-15T09:00'), 10)).toEqual([
      '2026-02-15T08:00:00.000Z',
      '2026-03-15T08:00:00.000Z',
      '2026-04-15T07:00:00.000Z',
      '2026-05-15T07:00:00.000Z',
      '2026-06-15T07:00:00.000Z',
      '2026-07-15T07:00:00.000Z',
      '2026-08-15T07:00:00.000Z',
      '2026-09-15T07:00:00.000Z',
      '2026-10-15T07:00:00.000Z',
      '2026-11-15T08:00:00.000Z',
    ]);
  });

  it('a wall time inside the spring-forward gap runs after the gap that day, and at its own time again the next', () => {
    // Paris 2026-03-29: 02:00 → 03:00, so 02:30 does not exist that day.
    expect(isoOf(timing('DAILY', 1, 'Europe/Paris', '2026-03-28T02:30'), 3)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z', // 03:30 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('a wall time inside the fall-back overlap runs once, at its first occurrence', () => {
    // Paris 2026-10-25: 03:00 → 02:00, so 02:30 happens twice (00:30Z and 01:30Z).
    expect(isoOf(timing('DAILY', 1, 'Europe/Paris', '2026-10-24T02:30'), 3)).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });
});

describe('monthly from the 31st', () => {
  it('lands on the last day of shorter months and returns to the 31st after', () => {
    expect(isoOf(timing('MONTHLY', 1, 'UTC', '2026-01-31T10:00'), 5)).toEqual([
      '2026-01-31T10:00:00.000Z',
      '2026-02-28T10:00:00.000Z',
      '2026-03-31T10:00:00.000Z',
      '2026-04-30T10:00:00.000Z',
      '2026-05-31T10:00:00.000Z',
    ]);
    // 2028 is a leap year.
    expect(isoOf(timing('MONTHLY', 1, 'America/New_York', '2028-01-31T09:00'), 3)).toEqual([
      '2028-01-31T14:00:00.000Z',
      '2028-02-29T14:00:00.000Z',
      '2028-03-31T13:00:00.000Z',
    ]);
  });

  it('every N months counts from the start, not from the previous (clamped) occurrence', () => {
    expect(isoOf(timing('MONTHLY', 2, 'UTC', '2025-12-31T08:00'), 4)).toEqual([
      '2025-12-31T08:00:00.000Z',
      '2026-02-28T08:00:00.000Z',
      '2026-04-30T08:00:00.000Z',
      '2026-06-30T08:00:00.000Z',
    ]);
    expect(isoOf(timing('MONTHLY', 12, 'UTC', '2028-02-29T08:00'), 3)).toEqual(['2028-02-29T08:00:00.000Z', '2029-02-28T08:00:00.000Z', '2030-02-28T08:00:00.000Z']);
  });
});

describe('every N', () => {
  it('daily every 3 days and weekly every 2 weeks', () => {
    expect(isoOf(timing('DAILY', 3, 'UTC', '2026-01-30T07:15'), 3)).toEqual(['2026-01-30T07:15:00.000Z', '2026-02-02T07:15:00.000Z', '2026-02-05T07:15:00.000Z']);
    expect(isoOf(timing('WEEKLY', 2, 'UTC', '2026-12-24T20:00'), 3)).toEqual(['2026-12-24T20:00:00.000Z', '2027-01-07T20:00:00.000Z', '2027-01-21T20:00:00.000Z']);
  });
});

describe('finding the occurrence for an instant', () => {
  const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Australia/Sydney'];
  const types: RecurringInterval[] = ['DAILY', 'WEEKLY', 'MONTHLY'];

  it('agrees with counting occurrences one by one', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...types),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: 3 * 365 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 400 * 86_400_000 }),
        fc.integer({ min: 0, max: 20 }),
        (type, every, zone, startDay, hour, offset, fromIndex) => {
          const startDate = new Date(Date.UTC(2026, 0, 1) + startDay * 86_400_000);
          const t: ScheduleTiming = {
            intervalType: type,
            intervalValue: every,
            timezone: zone,
            start: { year: startDate.getUTCFullYear(), month: startDate.getUTCMonth() + 1, day: startDate.getUTCDate(), hour, minute: 30, second: 0 },
          };
          const instant = occurrenceAt(t, 0) + offset;
          let expected: number | undefined;
          for (let k = fromIndex; occurrenceAt(t, k) <= instant; k++) expected = k;
          expect(lastOccurrenceIndexAtOrBefore(t, instant, fromIndex)).toBe(expected);
          const first = firstOccurrenceIndexAtOrAfter(t, instant, fromIndex);
          expect(occurrenceAt(t, first)).toBeGreaterThanOrEqual(instant);
          if (first > fromIndex) expect(occurrenceAt(t, first - 1)).toBeLessThan(instant);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('jumps years ahead in a few steps', () => {
    const t = timing('DAILY', 1, 'Europe/Paris', '2026-01-01T09:00');
    const tenYearsLater = Date.UTC(2036, 0, 1, 12);
    const index = lastOccurrenceIndexAtOrBefore(t, tenYearsLater, 0)!;
    expect(new Date(occurrenceAt(t, index)).toISOString()).toBe('2036-01-01T08:00:00.000Z');
    expect(index).toBe(3652);
  });
});

describe('reading recurring_schedule from the API', () => {
  it('reads wall times without offset in the site timezone and keeps a wall time inside a DST gap as typed', () => {
    const settings = readScheduleInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-03-29T02:30', end_date: null }, undefined, 'Europe/Paris');
    expect(settings).toMatchObject({ timezone: 'Europe/Paris', startLocal: '2026-03-29T02:30:00', startAt: Date.UTC(2026, 2, 29, 1, 30), endAt: null });
    const withOffset = readScheduleInput({ interval_type: 'WEEKLY', interval_value: 2, start_date: '2026-03-02T09:00:00Z', end_date: '2026-06-01T09:00' }, undefined, 'America/New_York');
    expect(withOffset).toMatchObject({ startLocal: '2026-03-02T04:00:00', startAt: Date.UTC(2026, 2, 2, 9), endAt: Date.UTC(2026, 5, 1, 13) });
  });

  it('refuses a missing or malformed start, and an end before the start', () => {
    expect(() => readScheduleInput({ interval_type: 'DAILY', interval_value: 1 }, undefined, 'UTC')).toThrow('Start date is required');
    expect(() => readScheduleInput({ interval_type: 'DAILY', interval_value: 1, start_date: 'tomorrow' }, undefined, 'UTC')).toThrow(ScheduleInputError);
    expect(() => readScheduleInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-05-01T09:00', end_date: '2026-05-01T09:00' }, undefined, 'UTC')).toThrow(
      'End date must be after the start date',
    );
  });

  it('keeps the stored start and timezone when a change leaves them out', () => {
    const stored = readScheduleInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-05-01T09:00' }, undefined, 'Europe/Paris');
    const changed = readScheduleInput({ interval_value: 2 }, stored, 'Asia/Tokyo');
    expect(changed).toEqual({ ...stored, intervalValue: 2 });
  });

  it('has no next occurrence once the end date has passed', () => {
    const settings = readScheduleInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-05-01T09:00', end_date: '2026-05-03T09:00' }, undefined, 'UTC');
    expect(nextOccurrence(settings, Date.UTC(2026, 4, 2, 10))).toEqual({ index: 2, at: Date.UTC(2026, 4, 3, 9) });
    expect(nextOccurrence(settings, Date.UTC(2026, 4, 3, 9, 1))).toBeUndefined();
  });
});
