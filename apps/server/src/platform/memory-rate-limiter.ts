/**
 * Fixed-window hit counters kept in this process's memory, for public
 * endpoints where a database write per request would itself be the cost an
 * attacker wants to impose (subscribe calls from customers' sites).
 *
 * Limits hold per process: with N server processes a client gets up to N
 * times the limit. That is acceptable for a flood guard; limits that must hold
 * across processes (login) use DatabaseRateLimiter instead.
 *
 * Memory is bounded: at most `maxKeys` counters are kept, least recently used
 * evicted first, so a client cycling through addresses or site ids cannot
 * grow the map without limit. A counter that is refusing (over its limit in
 * a window still running) is passed over while another can go: otherwise
 * requests to thousands of made-up site ids would evict a flooded site's
 * counter and reset its limit.
 */
export interface MemoryRateLimit {
  /** Hits allowed per window. */
  limit: number;
  windowMs: number;
  /** Counters kept at most; the least recently used is dropped beyond that. */
  maxKeys: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Hits counted in the current window, this one included. */
  hits: number;
  /** Milliseconds until the window resets (0 when allowed). */
  retryAfterMs: number;
}

interface Counter {
  windowStart: number;
  hits: number;
}

/** Counters looked at, least recently used first, for one that is not refusing (see evictBeyondCapacity). */
const EVICTION_SCAN_MAX = 64;

export class MemoryRateLimiter {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly rule: MemoryRateLimit) {
    if (rule.limit < 1 || rule.windowMs < 1 || rule.maxKeys < 1) throw new Error('MemoryRateLimiter: limit, windowMs and maxKeys must be positive');
  }

  /** Counts one hit for `key` at time `now` and says whether it is within the limit. */
  hit(key: string, now: number): RateLimitDecision {
    let counter = this.counters.get(key);
    if (counter) {
      // Re-inserting moves the key to the end of the Map's order: most recently used.
      this.counters.delete(key);
      if (counter.windowStart + this.rule.windowMs <= now) counter = { windowStart: now, hits: 0 };
    } else {
      counter = { windowStart: now, hits: 0 };
    }
    counter.hits += 1;
    this.counters.set(key, counter);
    this.evictBeyondCapacity(now);
    const allowed = counter.hits <= this.rule.limit;
    return { allowed, hits: counter.hits, retryAfterMs: allowed ? 0 : counter.windowStart + this.rule.windowMs - now };
  }

  /** Number of counters held (for tests and metrics). */
  get size(): number {
    return this.counters.size;
  }

  private evictBeyondCapacity(now: number): void {
    while (this.counters.size > this.rule.maxKeys) {
      let victim: string | undefined;
      let looked = 0;
      for (const [key, counter] of this.counters) {
        victim ??= key; // the least recently used, should every counter looked at be refusing
        if (counter.hits <= this.rule.limit || counter.windowStart + this.rule.windowMs <= now) {
          victim = key;
          break;
        }
        // Bounded: a map full of refusing counters must not make every new key a scan of all of them.
        if (++looked >= EVICTION_SCAN_MAX) break;
      }
      if (victim === undefined) return;
      this.counters.delete(victim);
    }
  }
}
