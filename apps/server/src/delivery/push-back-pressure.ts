// Back-pressure per push service and sender: what an answer (or the failure to
// get one) makes of a message, and the pauses it asks for (docs/delivery.md,
// "Sending, retries and back-pressure"; docs/security.md, "Push-service answers
// across tenants"). The verdicts are push-outcome.ts's pure rules; this applies
// them to the lanes:
//
// - a 429 pauses the lane it answered, that origin for that VAPID key, until
//   its Retry-After has passed, at most `maxRetryAfterMs`: other sites on the
//   same push service and other origins keep flowing;
// - a 503 with Retry-After, and `transportFailuresBeforePause` timeouts or
//   connection failures in a row, pause the whole origin (every lane, and lanes
//   opened meanwhile);
// - after a pause one request probes first;
// - a pause longer than `maxPauseWaitMs` is not waited out: its messages come
//   back `deferred` with the time to try again.
//
// Every time is read from the client's injected clock.
import type { Clock } from '../platform/clock';
import type { PushClientOptions } from './push-client-options';
import { classifyAnswer, classifyTransportError, describeError, type PushOutcome, type RetryableReason, type RetryPolicy } from './push-outcome';
import { RequestDeadlineError, type Job, type Lane } from './push-request';

export interface BackPressureOptions {
  clock: Clock;
  retryPolicy: RetryPolicy;
  /** A pause that ends within this is waited for; a later one defers its messages. */
  maxPauseWaitMs: number;
  transportFailuresBeforePause: number;
  transportFailurePauseMs: number;
  onOriginPaused: PushClientOptions['onOriginPaused'];
  /** A pause too long to wait for began on a lane holding parked messages: hand them back deferred (deferredBy). */
  deferParked(lane: Lane): void;
  /** A lane's pause is over: its parked messages may start. */
  resumed(lane: Lane): void;
}

export class BackPressure {
  constructor(private readonly options: BackPressureOptions) {}

  /** The outcome of a request whose status line arrived (it decides, even if the body then failed). */
  outcomeOfAnswer(job: Job): PushOutcome {
    const { clock, retryPolicy } = this.options;
    const lane = job.lane;
    lane.origin.transportFailures = 0;
    if (lane.probing && job.status !== 429) lane.probing = false;
    const verdict = classifyAnswer(job.status, job.reasonText(), job.retryAfter, clock.now(), retryPolicy);
    switch (verdict.kind) {
      case 'rate-limited':
        return { kind: 'rate-limited', status: 429, reason: verdict.reason, retryAt: this.pauseLane(lane, verdict.pauseMs, 'rate_limited', '429 Too Many Requests') };
      case 'retryable': {
        const { status, reason, code } = verdict;
        if (verdict.pauseOriginMs !== undefined) {
          return { kind: 'retryable', status, reason, code, retryAt: this.pauseOrigin(lane, verdict.pauseOriginMs, code, `${status} Service Unavailable`) };
        }
        return verdict.waitMs === undefined ? { kind: 'retryable', status, reason, code } : { kind: 'retryable', status, reason, code, retryAt: clock.now() + verdict.waitMs };
      }
      default:
        return verdict;
    }
  }

  /** The outcome of a request that got no status line: the deadline passed, or the connection failed. */
  outcomeOfTransportFailure(job: Job, error: Error): PushOutcome {
    const { transportFailuresBeforePause, transportFailurePauseMs } = this.options;
    const origin = job.lane.origin;
    const deadline = error instanceof RequestDeadlineError;
    const code = classifyTransportError(error, deadline);
    const reason = deadline ? `timeout: ${error.message}` : `connection: ${describeError(error)}`;
    if (++origin.transportFailures >= transportFailuresBeforePause) {
      origin.transportFailures = 0;
      const retryAt = this.pauseOrigin(job.lane, transportFailurePauseMs, code, `${transportFailuresBeforePause} failed requests in a row (${reason})`);
      return { kind: 'retryable', retryAt, reason, code };
    }
    return { kind: 'retryable', reason, code };
  }

  /** Whether a message for this lane should not wait: it is paused past what the client waits for. */
  isPausedPastWait(lane: Lane): boolean {
    return lane.paused && lane.pausedUntil - this.options.clock.now() > this.options.maxPauseWaitMs;
  }

  /** The outcome of a message its lane's pause holds back: try again when the pause ends. */
  deferredBy(lane: Lane): PushOutcome {
    return { kind: 'deferred', retryAt: lane.pausedUntil, reason: `${lane.origin.origin} is paused`, code: lane.pauseCode };
  }

  /** A lane just opened while its origin is paused starts paused for the rest of that pause. */
  laneOpened(lane: Lane): void {
    const left = lane.origin.pausedUntil - this.options.clock.now();
    if (left > 0) this.pauseLane(lane, left, lane.origin.pauseCode, `${lane.origin.origin} is paused`);
  }

  /**
   * Pauses every sender on the origin of `answered`'s lane (the push service is
   * unreachable or unavailable); lanes opened meanwhile start paused. Returns
   * when that lane may send again: its own pause, never another site's longer
   * one (a 429 pauses only the site it throttled, docs/delivery.md).
   */
  private pauseOrigin(answered: Lane, delayMs: number, code: RetryableReason, reason: string): number {
    const origin = answered.origin;
    const until = this.options.clock.now() + delayMs;
    if (until > origin.pausedUntil) {
      origin.pausedUntil = until;
      origin.pauseCode = code;
    }
    let own = until;
    for (const lane of origin.lanes.values()) {
      const laneUntil = this.pauseLane(lane, delayMs, code, reason);
      if (lane === answered) own = laneUntil;
    }
    return own;
  }

  /** Pauses a lane for `delayMs` (extending, never shortening, a pause in force), at most the longest Retry-After honoured. Returns when it ends. */
  private pauseLane(lane: Lane, delayMs: number, code: RetryableReason, reason: string): number {
    const { clock, retryPolicy, maxPauseWaitMs, onOriginPaused } = this.options;
    const wait = Math.min(delayMs, retryPolicy.maxRetryAfterMs);
    const until = clock.now() + wait;
    if (lane.paused && lane.pausedUntil >= until) return lane.pausedUntil;
    lane.paused = true;
    lane.pausedUntil = until;
    lane.pauseCode = code;
    if (lane.pauseTimer) clearTimeout(lane.pauseTimer);
    lane.pauseTimer = setTimeout(() => this.resume(lane), wait);
    if (lane.parked.length === 0) lane.pauseTimer.unref();
    onOriginPaused?.(lane.origin.origin, until, reason, lane.key);
    // Messages held for this lane will not be waited for if the pause is long.
    if (wait > maxPauseWaitMs && lane.parked.length > 0) this.options.deferParked(lane);
    return until;
  }

  private resume(lane: Lane): void {
    lane.paused = false;
    lane.pauseTimer = undefined;
    lane.probing = true;
    this.options.resumed(lane);
  }
}
