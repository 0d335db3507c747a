import { describe, expect, it } from 'vitest';
import { DUE_SOON_POLL_MS, SENDING_POLL_MS, pollInterval } from './api';
import { makeNotification } from '../../test/notification-fixtures';

const now = Date.parse('2026-03-01T12:00:00.000Z');

describe('how often a notifications screen looks again', () => {
  it('quickly while one is sending, now and then while a one-time send is due within the hour, otherwise never', () => {
    const draft = makeNotification({ status: 'draft' });
    const sending = makeNotification({ status: 'sending' });
    const inHalfAnHour = makeNotification({ status: 'scheduled', scheduled_at: '2026-03-01T12:30:00.000Z' });
    const overdue = makeNotification({ status: 'scheduled', scheduled_at: '2026-03-01T11:59:00.000Z' });
    const tomorrow = makeNotification({ status: 'scheduled', scheduled_at: '2026-03-02T12:00:00.000Z' });
    const recurring = makeNotification({ type: 'RECURRING', status: 'scheduled', scheduled_at: null });

    expect(pollInterval([draft, sending, inHalfAnHour], now)).toBe(SENDING_POLL_MS);
    expect(pollInterval([draft, inHalfAnHour], now)).toBe(DUE_SOON_POLL_MS);
    expect(pollInterval([overdue], now)).toBe(DUE_SOON_POLL_MS);
    expect(pollInterval([draft, tomorrow, recurring], now)).toBe(false);
    expect(pollInterval([], now)).toBe(false);
  });
});
