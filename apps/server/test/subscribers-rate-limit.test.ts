import { describe, expect, it } from 'vitest';
import { normalizeAddress, rateLimitKeyOfAddress } from '../src/platform/client-address';
import { MemoryRateLimiter } from '../src/platform/memory-rate-limiter';

// The in-memory limiter behind the public subscribe API and the address keys it counts under.

describe('MemoryRateLimiter', () => {
  it('allows `limit` hits per window, then says how long to wait, then resets', () => {
    const limiter = new MemoryRateLimiter({ limit: 3, windowMs: 10_000, maxKeys: 10 });
    const start = 1_000_000;
    expect([1, 2, 3].map((i) => limiter.hit('a', start + i).allowed)).toEqual([true, true, true]);
    const refused = limiter.hit('a', start + 4_000);
    expect(refused).toEqual({ allowed: false, hits: 4, retryAfterMs: 10_000 - 4_000 + 1 });
    expect(limiter.hit('b', start + 4_000).allowed).toBe(true);
    expect(limiter.hit('a', start + 1 + 10_000)).toEqual({ allowed: true, hits: 1, retryAfterMs: 0 });
  });

  it('keeps at most maxKeys counters, dropping the least recently used', () => {
    const limiter = new MemoryRateLimiter({ limit: 1, windowMs: 60_000, maxKeys: 100 });
    limiter.hit('kept', 0);
    for (let i = 0; i < 10_000; i += 1) {
      limiter.hit(`attacker-${i}`, 1);
      // A key in use stays (it is the most recently used).
      if (i % 50 === 0) limiter.hit('kept', 1);
      expect(limiter.size).toBeLessThanOrEqual(100);
    }
    expect(limiter.hit('kept', 2).allowed).toBe(false);
    // The oldest attacker keys were evicted, so they start again.
    expect(limiter.hit('attacker-0', 2).allowed).toBe(true);
  });
});

describe('client address keys', () => {
  it('a counter that is refusing is not evicted by made-up keys: thousands of fake site ids do not reset a flooded site', () => {
    const limiter = new MemoryRateLimiter({ limit: 5, windowMs: 60_000, maxKeys: 100 });
    for (let i = 0; i < 6; i++) limiter.hit('flooded-site', i);
    expect(limiter.hit('flooded-site', 10).allowed).toBe(false);
    // 10,000 made-up ids, one hit each: far more than the map holds.
    for (let i = 0; i < 10_000; i++) limiter.hit(`made-up-${i}`, 20);
    expect(limiter.size).toBe(100);
    expect(limiter.hit('flooded-site', 30)).toMatchObject({ allowed: false });
    // Its window ends as any other: then it is an ordinary counter again.
    expect(limiter.hit('flooded-site', 60_000).allowed).toBe(true);
  });

  it('unwraps IPv4-mapped IPv6 and zone ids', () => {
    expect(normalizeAddress('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(normalizeAddress('fe80::1%eth0')).toBe('fe80::1');
    expect(normalizeAddress('2001:DB8::1')).toBe('2001:db8::1');
  });

  it('counts IPv4 per address and IPv6 per /64', () => {
    expect(rateLimitKeyOfAddress('203.0.113.5')).toBe('203.0.113.5');
    expect(rateLimitKeyOfAddress('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(rateLimitKeyOfAddress('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(rateLimitKeyOfAddress('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(rateLimitKeyOfAddress('2001:0db8:0001:0002:ffff::')).toBe('2001:db8:1:2::/64');
    expect(rateLimitKeyOfAddress('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(rateLimitKeyOfAddress('::1')).toBe('0:0:0:0::/64');
    expect(rateLimitKeyOfAddress('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
    expect(rateLimitKeyOfAddress('2001:db8:1:3::1')).not.toBe(rateLimitKeyOfAddress('2001:db8:1:2::1'));
  });
});
