// When to try a message again after a non-final outcome (docs/delivery.md:
// "429 pauses that push-service origin for Retry-After; 5xx and timeouts
// retry with capped, jittered exponential backoff").
import type { PushOutcome } from './push-client';

export interface BackoffOptions {
  /** Delay before the first retry (default 30 s). */
  baseMs?: number;
  /** Longest delay (default 1 h). */
  maxMs?: number;
  /** Source of randomness in [0, 1) (tests pass a fixed one). */
  random?: () => number;
}

/**
 * Capped exponential backoff with "equal jitter": between half and all of
 * min(max, base × 2^(attempt − 1)), so retries spread out without ever
 * collapsing to zero. `attempt` counts failed attempts so far (1 = first).
 */
export function backoffDelayMs(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 30_000;
  const max = options.maxMs ?? 60 * 60 * 1000;
  const random = options.random ?? Math.random;
  const exponential = Math.min(max, base * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

/**
 * The time (epoch ms) to try a non-final outcome again: the push service's
 * own time when it gave one (429, deferred, 503 with Retry-After), else the
 * backoff for this attempt. Undefined for final outcomes (sent, gone, failed).
 */
export function nextAttemptAt(outcome: PushOutcome, attempt: number, now: number, options?: BackoffOptions): number | undefined {
  switch (outcome.kind) {
    case 'sent':
    case 'gone':
    case 'failed':
      return undefined;
    case 'rate-limited':
    case 'deferred':
      return outcome.retryAt;
    case 'retryable':
      return outcome.retryAt ?? now + backoffDelayMs(attempt, options);
  }
}
