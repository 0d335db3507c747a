import { describe, expect, it } from 'vitest';
import { instantOfWallTime, parseDateTimeInZone, wallTimeOf } from './wall-time';

describe('wall times in a site timezone', () => {
  it('reads a datetime-local value in the site timezone', () => {
    expect(parseDateTimeInZone('2026-07-01T09:00', 'Europe/Paris')).toBe(Date.UTC(2026, 6, 1, 7, 0));
    expect(parseDateTimeInZone('2026-01-15T09:00', 'Europe/Paris')).toBe(Date.UTC(2026, 0, 15, 8, 0));
    expect(parseDateTimeInZone('2026-01-15T09:00', 'UTC')).toBe(Date.UTC(2026, 0, 15, 9, 0));
    expect(parseDateTimeInZone('2026-01-15T09:00', 'America/New_York')).toBe(Date.UTC(2026, 0, 15, 14, 0));
  });

  it('takes an offset or Z as an instant', () => {
    expect(parseDateTimeInZone('2026-01-15T09:00:00Z', 'Asia/Tokyo')).toBe(Date.UTC(2026, 0, 15, 9));
    expect(parseDateTimeInZone('2026-01-15T09:00:00.000+02:00', 'UTC')).toBe(Date.UTC(2026, 0, 15, 7));
  });

  it('refuses things that are not date-times', () => {
    for (const bad of ['', 'tomorrow', '2026-02-30T09:00', '2026-13-01T00:00', '2026-01-01T24:00', '2026-01-01', '12/01/2026 09:00']) {
      expect(parseDateTimeInZone(bad, 'UTC'), bad).toBeUndefined();
    }
  });

  it('moves a wall time in a spring-forward gap to after the gap, and takes the first of a fall-back overlap', () => {
    // Europe/Paris 2026-03-29: 02:00 → 03:00.
    expect(instantOfWallTime({ year: 2026, month: 3, day: 29, hour: 2, minute: 30, second: 0 }, 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 1, 30));
    // Europe/Paris 2026-10-25: 03:00 → 02:00; 02:30 happens twice, first at 00:30 UTC.
    expect(instantOfWallTime({ year: 2026, month: 10, day: 25, hour: 2, minute: 30, second: 0 }, 'Europe/Paris')).toBe(Date.UTC(2026, 9, 25, 0, 30));
  });

  it('formats an instant back as a wall time', () => {
    const instant = Date.UTC(2026, 6, 1, 7, 0);
    expect(wallTimeOf(instant, 'Asia/Tokyo')).toMatchObject({ hour: 16, day: 1 });
  });
});
