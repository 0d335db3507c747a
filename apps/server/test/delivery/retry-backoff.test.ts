import { describe, expect, it } from 'vitest';
import { backoffDelayMs, nextAttemptAt } from '../../src/delivery/retry-backoff';

describe('retry backoff', () => {
  it('doubles per attempt between half and all of the step, up to the cap', () => {
    const low = { random: () => 0 };
    const high = { random: () => 1 - Number.EPSILON };
    expect(backoffDelayMs(1, low)).toBe(15_000);
    expect(backoffDelayMs(1, high)).toBe(30_000);
    expect(backoffDelayMs(2, low)).toBe(30_000);
    expect(backoffDelayMs(3, high)).toBe(120_000);
    expect(backoffDelayMs(20, high)).toBe(3_600_000);
    expect(backoffDelayMs(1_000, low)).toBe(1_800_000);
    expect(backoffDelayMs(1, { baseMs: 100, maxMs: 150, random: () => 0.5 })).toBe(75);
  });

  it('uses the push service time when there is one, and nothing for final outcomes', () => {
    const now = 1_000_000;
    const options = { random: () => 0 };
    expect(nextAttemptAt({ kind: 'sent', status: 201 }, 1, now)).toBeUndefined();
    expect(nextAttemptAt({ kind: 'gone', status: 410, reason: '410' }, 1, now)).toBeUndefined();
    expect(nextAttemptAt({ kind: 'failed', status: 403, reason: 'VAPID' }, 1, now)).toBeUndefined();
    expect(nextAttemptAt({ kind: 'rate-limited', status: 429, retryAt: now + 5, reason: '429' }, 1, now)).toBe(now + 5);
    expect(nextAttemptAt({ kind: 'deferred', retryAt: now + 7, reason: 'paused' }, 1, now)).toBe(now + 7);
    expect(nextAttemptAt({ kind: 'retryable', status: 503, retryAt: now + 9, reason: '503' }, 4, now)).toBe(now + 9);
    expect(nextAttemptAt({ kind: 'retryable', reason: 'timeout' }, 2, now, options)).toBe(now + 30_000);
  });
});
