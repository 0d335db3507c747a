import { describe, expect, it } from 'vitest';
import { insideQuietHours, nextWallTimeAfter, notificationDelivery, quietHours, quietHoursEndAfter } from './local-time';

describe('local time of day in a zone', () => {
  it('finds the next 09:00 at or after an instant, across a DST change', () => {
    // 28 March 2026, 22:00 UTC (23:00 CET); Paris moves to CEST at 01:00 UTC.
    expect(nextWallTimeAfter(Date.UTC(2026, 2, 28, 22), '09:00', 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 7));
    // Exactly 09:00 is "at": today's.
    expect(nextWallTimeAfter(Date.UTC(2026, 2, 29, 7), '09:00', 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 7));
    // Autumn: 25 October 2026 is 25 hours long in Paris; 09:00 is then UTC+1.
    expect(nextWallTimeAfter(Date.UTC(2026, 9, 24, 22), '09:00', 'Europe/Paris')).toBe(Date.UTC(2026, 9, 25, 8));
  });

  it('runs a time a spring-forward gap skips one offset later', () => {
    // 02:30 does not exist in Paris on 29 March 2026: 03:30 CEST (01:30 UTC).
    expect(nextWallTimeAfter(Date.UTC(2026, 2, 28, 22), '02:30', 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 1, 30));
  });

  it('tells inside from outside a window that wraps midnight and one that does not, with its end', () => {
    const night = { start: '22:00', end: '08:00' };
    expect(insideQuietHours(Date.UTC(2026, 5, 1, 21, 59), night, 'UTC')).toBe(false);
    expect(insideQuietHours(Date.UTC(2026, 5, 1, 22), night, 'UTC')).toBe(true);
    expect(insideQuietHours(Date.UTC(2026, 5, 2, 7, 59), night, 'UTC')).toBe(true);
    expect(insideQuietHours(Date.UTC(2026, 5, 2, 8), night, 'UTC')).toBe(false);
    expect(quietHoursEndAfter(Date.UTC(2026, 5, 1, 14), night, 'Asia/Tokyo')).toBe(Date.UTC(2026, 5, 1, 23)); // 23:00 JST → 08:00 JST
    const lunch = { start: '12:00', end: '14:00' };
    expect(insideQuietHours(Date.UTC(2026, 5, 1, 11, 59), lunch, 'UTC')).toBe(false);
    expect(insideQuietHours(Date.UTC(2026, 5, 1, 13), lunch, 'UTC')).toBe(true);
    expect(insideQuietHours(Date.UTC(2026, 5, 1, 14), lunch, 'UTC')).toBe(false);
  });

  it('validates HH:MM and the mode', () => {
    expect(notificationDelivery.safeParse({ mode: 'subscriber_local_time', local_time: '23:59' }).success).toBe(true);
    expect(notificationDelivery.safeParse({ mode: 'subscriber_local_time', local_time: '24:00' }).success).toBe(false);
    expect(notificationDelivery.safeParse({ mode: 'at_once', local_time: '09:00' }).success).toBe(false);
    expect(quietHours.safeParse({ start: '22:00', end: '22:00' }).success).toBe(false);
  });
});
