import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/delivery/record-outcomes';

// The one retry policy for 5xx answers and timeouts (docs/delivery.md):
// capped, jittered exponential backoff from DELIVERY_RETRY_BASE_MS.
describe('retry delay', () => {
  it('doubles per attempt, within ±20 % jitter, and never waits more than 5 minutes (+20 %)', () => {
    const low = () => 0;
    const high = () => 1;
    const middle = () => 0.5;
    expect(retryDelayMs(2000, 1, middle)).toBe(2000);
    expect(retryDelayMs(2000, 2, middle)).toBe(4000);
    expect(retryDelayMs(2000, 4, middle)).toBe(16000);
    expect(retryDelayMs(2000, 1, low)).toBe(1600);
    expect(retryDelayMs(2000, 1, high)).toBe(2400);
    expect(retryDelayMs(2000, 30, middle)).toBe(300_000);
    expect(retryDelayMs(2000, 30, high)).toBe(360_000);
    // An attempt count of 0 (a retry that did not count) waits the base delay.
    expect(retryDelayMs(2000, 0, middle)).toBe(2000);
  });
});
