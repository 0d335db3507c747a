import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { makeNotification } from '../../test/notification-fixtures';
import { ThrottleEstimate } from './components/throttle-estimate';
import { expectedFinishAt } from './throttle-estimate';

// Issue 14 §5: while a throttled send is in progress, the notification page
// says when it should finish, from its audience and its rate, as an estimate.
const start = Date.parse('2026-06-01T08:00:00.000Z');
const MINUTE = 60_000;
const counts = (targeted: number, sent: number) => ({ targeted, sent, failed: 0, expired: 0, skipped: 0, pending: targeted - sent, delivered: 0, clicked: 0 });

describe('expected finish of a throttled send', () => {
  const sending = (overrides: Parameters<typeof makeNotification>[0]) =>
    makeNotification({ status: 'sending', throttle_per_minute: 10, sent_at: new Date(start).toISOString(), counts: counts(25, 0), ...overrides });

  it('25 at 10 a minute starts its last minute two minutes after the start, whenever the page looks', () => {
    expect(expectedFinishAt(sending({}), start)).toBe(start + 2 * MINUTE);
    expect(expectedFinishAt(sending({ counts: counts(25, 10) }), start + 30_000)).toBe(start + 2 * MINUTE);
  });

  it('moves later when the send fell behind (what is pending needs more minutes from now)', () => {
    expect(expectedFinishAt(sending({ counts: counts(25, 10) }), start + 5 * MINUTE)).toBe(start + 6 * MINUTE);
  });

  it('is null when the send is not throttled, not sending, or has nothing left to send', () => {
    expect(expectedFinishAt(sending({ throttle_per_minute: null }), start)).toBeNull();
    expect(expectedFinishAt(sending({ status: 'completed' }), start)).toBeNull();
    expect(expectedFinishAt(sending({ counts: counts(25, 25) }), start)).toBeNull();
  });

  it('a recurring notification reads only what is pending (its counts add up every occurrence)', () => {
    expect(expectedFinishAt(sending({ type: 'RECURRING', counts: counts(1000, 980) }), start)).toBe(start + MINUTE);
  });

  it('says it is an estimate, with the rate and the time in the site’s timezone', () => {
    render(<ThrottleEstimate notification={sending({})} timeZone="Europe/Paris" now={start} />);
    expect(screen.getByTestId('throttle-estimate')).toHaveTextContent(
      'Spread at 10 messages a minute: expected to finish about Jun 1, 2026, 10:02 AM (an estimate from the 25 still to send and the rate).',
    );
  });
});
