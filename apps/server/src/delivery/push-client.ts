// Sends encrypted Web Push messages (RFC 8030 §5) and says what happened to
// each one. It owns everything between "this subscriber should get these
// bytes" and "the push service answered X":
//
// - one undici keep-alive pool per push-service origin, with a bounded number
//   of connections, and a bound on requests in flight overall;
// - an overall deadline per request (queueing, connecting, sending and the
//   answer), so a black-holed endpoint cannot pin sockets or memory;
// - RFC 8291 encryption (worker threads by default) and the VAPID header from
//   a token cache (signed once per push-service origin and site key);
// - back-pressure per push service and sender: a 429 pauses that origin for
//   the VAPID key it throttled (a "lane") until its Retry-After has passed, at
//   most an hour; no request of that lane is sent before then, other sites and
//   other origins keep flowing. Transport failures and a 503 with Retry-After
//   pause the whole origin. A long pause is not waited out: the message comes
//   back `deferred` with the time to try again;
// - a batch API that pulls messages from an iterator only when there is room,
//   so a fan-out of any size runs in bounded memory.
//
// Retrying is the caller's decision (it owns the delivery rows): outcomes say
// whether a message is done (sent / gone / failed) or should be tried again
// (rate-limited / deferred / retryable), and when.
import os from 'node:os';
import { systemClock, type Clock } from '../platform/clock';
import { decodeSubscriberKeys, type EncodedSubscriberKeys, type SubscriberKeys } from './encryption';
import { createEncryptionPool, type PushEncryptor } from './encryption-pool';
import { isPermanentlyRemovedEndpoint } from './push-endpoints';
import { MAX_TTL_SECONDS, type PushMessage } from './push-message';
import {
  classifyAnswer,
  classifyTransportError,
  describeError,
  errorMessage,
  localFailureCode,
  type PushOutcome,
  type PushOutcomeKind,
  type RetryableReason,
  type RetryPolicy,
} from './push-outcome';
import type { PushClientOptions, PushClientStats, PushMetrics, SendAllSummary } from './push-client-options';
import { PushLanes } from './push-lanes';
import { Job, RequestDeadlineError, type Lane, type OriginState } from './push-request';
import { pushServiceOf } from './push-services';
import { isValidTopic } from './topic';
import { VapidTokenCache } from './vapid';

class PushClientClosedError extends Error {
  constructor() {
    super('The push client is closed');
    this.name = 'PushClientClosedError';
  }
}

interface Batch {
  /** Messages taken from the source and not yet reported. */
  outstanding: number;
  /** onResult promises not yet settled. */
  pendingResults: number;
  error: unknown;
  failed: boolean;
  wake: (() => void) | undefined;
}

export class PushClient {
  private readonly concurrency: number;
  private readonly maxInFlightPerOrigin: number;
  private readonly connectionsPerOrigin: number;
  private readonly requestTimeoutMs: number;
  private readonly maxPauseWaitMs: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly transportFailuresBeforePause: number;
  private readonly transportFailurePauseMs: number;
  private readonly maxParked: number;
  private readonly encryptor: PushEncryptor;
  private readonly ownsEncryptor: boolean;
  private readonly vapidTokens: VapidTokenCache;
  private readonly clock: Clock;
  private readonly allowOrigin: ((origin: string) => boolean) | undefined;
  private readonly onOriginPaused: PushClientOptions['onOriginPaused'];
  private readonly metrics: PushMetrics | undefined;

  private readonly lanes: PushLanes;
  /** Lanes with parked messages, in the order they got them. */
  private readonly parkedLanes = new Set<Lane>();
  private inFlight = 0;
  /**
   * Outcomes handed to an onResult that has not settled yet (the caller is
   * still recording them). They count against `concurrency` with the requests
   * in flight, so a crash can leave at most `concurrency` pushes sent but not
   * recorded (docs/delivery.md: duplicates after a crash ≤ concurrency).
   */
  private awaitingResults = 0;
  /**
   * Slots a batch has claimed before pulling its next message from an
   * (async) source. Without them, every batch woken by one free slot passed
   * the room check before any of them admitted its message.
   */
  private reserved = 0;
  private parkedCount = 0;
  private readonly roomWaiters = new Set<() => void>();
  private readonly idleWaiters: Array<() => void> = [];
  private closing = false;
  private closePromise: Promise<void> | undefined;

  constructor(options: PushClientOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? 200);
    this.maxInFlightPerOrigin = Math.max(1, options.maxInFlightPerOrigin ?? this.concurrency);
    this.connectionsPerOrigin = Math.max(1, options.connectionsPerOrigin ?? 32);
    this.requestTimeoutMs = Math.max(1, options.requestTimeoutMs ?? 15_000);
    this.maxPauseWaitMs = Math.max(0, options.maxPauseWaitMs ?? 5_000);
    this.retryPolicy = { defaultRetryAfterMs: options.defaultRetryAfterMs ?? 60_000, maxRetryAfterMs: options.maxRetryAfterMs ?? 60 * 60 * 1000 };
    this.transportFailuresBeforePause = Math.max(1, options.transportFailuresBeforePause ?? 10);
    this.transportFailurePauseMs = options.transportFailurePauseMs ?? 30_000;
    this.maxParked = Math.max(1, options.maxParked ?? this.concurrency * 4);
    this.ownsEncryptor = !options.encryptor;
    this.encryptor =
      options.encryptor ??
      createEncryptionPool({ threads: options.encryptionThreads ?? Math.min(4, os.availableParallelism()) });
    this.vapidTokens = options.vapidTokens ?? new VapidTokenCache({ clock: options.clock });
    this.clock = options.clock ?? systemClock;
    this.allowOrigin = options.allowOrigin;
    this.onOriginPaused = options.onOriginPaused;
    this.metrics = options.metrics;
    const keepAlive = options.keepAliveTimeoutMs ?? 30_000;
    this.lanes = new PushLanes({
      connections: this.connectionsPerOrigin,
      // undici's own timers are idle timers; the overall deadline is ours, so theirs only need to be no longer.
      connectTimeout: Math.min(10_000, this.requestTimeoutMs),
      headersTimeout: this.requestTimeoutMs,
      bodyTimeout: this.requestTimeoutMs,
      keepAliveTimeout: keepAlive,
      keepAliveMaxTimeout: Math.max(keepAlive, 60_000),
      // Push services answer with a few bytes; anything huge is not worth reading.
      maxResponseSize: 64 * 1024,
      allowH2: options.allowH2 ?? false,
      connect: options.connect,
    }, this.clock);
  }

  /** Sends one message. Never rejects for a push failure: the outcome says what happened. */
  send<Ref>(message: PushMessage<Ref>): Promise<PushOutcome> {
    if (this.closing) return Promise.reject(new PushClientClosedError());
    return new Promise((resolve) => this.admit(new Job(this.onAnswer, message, resolve)));
  }

  /**
   * Sends every message from `messages` (an array, a generator or an async
   * generator that pages through the audience), at most `concurrency` at a
   * time, calling `onResult` once per message as its outcome is known.
   *
   * Messages are pulled only when there is room, so memory stays bounded
   * whatever the source's size. If `onResult` returns a promise, the batch
   * counts it as in flight until it settles (a slow database slows the sending
   * down instead of piling up results). If it throws or rejects, no further
   * messages are pulled and sendAll rejects once those in flight are reported.
   * After close(), it stops pulling and resolves with `stopped: true`.
   */
  async sendAll<Ref>(
    messages: Iterable<PushMessage<Ref>> | AsyncIterable<PushMessage<Ref>>,
    onResult: (message: PushMessage<Ref>, outcome: PushOutcome) => void | Promise<void>,
  ): Promise<SendAllSummary> {
    if (this.closing) throw new PushClientClosedError();
    const counts: Record<PushOutcomeKind, number> = { sent: 0, gone: 0, 'rate-limited': 0, deferred: 0, retryable: 0, failed: 0 };
    let total = 0;
    const batch: Batch = { outstanding: 0, pendingResults: 0, error: undefined, failed: false, wake: undefined };
    const wakeBatch = () => {
      const wake = batch.wake;
      batch.wake = undefined;
      wake?.();
    };
    const fail = (error: unknown) => {
      if (!batch.failed) {
        batch.failed = true;
        batch.error = error;
      }
    };
    const report = (message: PushMessage<Ref>, outcome: PushOutcome) => {
      counts[outcome.kind]++;
      total++;
      batch.outstanding--;
      let result: void | Promise<void> = undefined;
      try {
        result = onResult(message, outcome);
      } catch (error) {
        fail(error);
      }
      if (result && typeof result.then === 'function') {
        batch.pendingResults++;
        this.awaitingResults++;
        const settled = () => {
          batch.pendingResults--;
          this.awaitingResults--;
          wakeBatch();
          // A slot is free again: parked messages go first (schedule() then wakes
          // the batches). Parked ones are otherwise started only when a push
          // service answers, and none may be left to answer: every batch would
          // then wait for its parked messages forever.
          this.schedule();
        };
        result.then(settled, (error: unknown) => {
          fail(error);
          settled();
        });
      }
      wakeBatch();
    };

    const iterator =
      Symbol.asyncIterator in messages
        ? (messages as AsyncIterable<PushMessage<Ref>>)[Symbol.asyncIterator]()
        : (messages as Iterable<PushMessage<Ref>>)[Symbol.iterator]();
    let exhausted = false;
    try {
      while (!batch.failed && !this.closing) {
        if (!this.hasRoom() || batch.pendingResults >= this.concurrency) {
          await this.waitForRoom(batch);
          continue;
        }
        // The slot is this batch's while it waits for its source.
        this.reserved++;
        let next: IteratorResult<PushMessage<Ref>>;
        try {
          next = await iterator.next();
        } finally {
          this.reserved--;
        }
        if (next.done) {
          exhausted = true;
          break;
        }
        const message = next.value;
        batch.outstanding++;
        this.admit(new Job(this.onAnswer, message as PushMessage<unknown>, (outcome) => report(message, outcome)));
      }
    } catch (error) {
      fail(error);
    }
    // Another batch may be waiting for the slot this one reserved last.
    this.wakeRoomWaiters();
    if (!exhausted) {
      // Let a generator run its finally blocks (close a database cursor, say).
      try {
        await iterator.return?.();
      } catch (error) {
        fail(error);
      }
    }
    while (batch.outstanding > 0 || batch.pendingResults > 0) {
      await new Promise<void>((resolve) => (batch.wake = resolve));
    }
    if (batch.failed) throw batch.error;
    return { total, counts, stopped: !exhausted };
  }

  /** Counts for monitoring and tests. */
  stats(): PushClientStats {
    return {
      inFlight: this.inFlight,
      awaitingResults: this.awaitingResults,
      parked: this.parkedCount,
      origins: [...this.lanes.all()].map((o) => {
        const lanes = [...o.lanes.values()].map((lane) => ({
          vapidKey: lane.key,
          inFlight: lane.inFlight,
          parked: lane.parked.length,
          paused: lane.paused,
          pausedUntil: lane.paused ? lane.pausedUntil : null,
        }));
        const pausedUntil = Math.max(0, ...lanes.map((lane) => lane.pausedUntil ?? 0));
        return {
          origin: o.origin,
          inFlight: o.inFlight,
          parked: lanes.reduce((sum, lane) => sum + lane.parked, 0),
          paused: lanes.some((lane) => lane.paused),
          pausedUntil: pausedUntil || null,
          connections: o.pool.stats.connected,
          lanes,
        };
      }),
    };
  }

  /**
   * Graceful close: takes no new messages, reports parked ones as deferred,
   * lets requests in flight finish (each within its deadline), then closes
   * the connections and the encryption threads.
   */
  close(): Promise<void> {
    this.closePromise ??= this.shutDown();
    return this.closePromise;
  }

  private async shutDown(): Promise<void> {
    this.closing = true;
    for (const wake of [...this.roomWaiters]) wake();
    const now = this.clock.now();
    for (const origin of this.lanes.all()) {
      for (const lane of origin.lanes.values()) {
        for (const job of lane.parked.splice(0)) this.finish(job, { kind: 'deferred', retryAt: now, reason: 'Herald is shutting down', code: null });
        if (lane.pauseTimer) clearTimeout(lane.pauseTimer);
      }
    }
    this.parkedLanes.clear();
    this.parkedCount = 0;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.lanes.close();
    if (this.ownsEncryptor) await this.encryptor.close();
  }

  // ---- scheduling ---------------------------------------------------------

  private hasRoom(): boolean {
    return this.inFlight + this.awaitingResults + this.reserved < this.concurrency && this.parkedCount < this.maxParked;
  }

  /**
   * Whether one more push may start: pushes in flight plus outcomes not yet
   * recorded stay within `concurrency`, exactly (docs/delivery.md: a crash
   * re-sends at most PUSH_CONCURRENCY pushes per process).
   */
  private canStart(): boolean {
    return this.inFlight + this.awaitingResults < this.concurrency;
  }

  private wakeRoomWaiters(): void {
    if (this.roomWaiters.size > 0 && this.hasRoom()) for (const wake of [...this.roomWaiters]) wake();
  }

  private waitForRoom(batch: Batch): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        this.roomWaiters.delete(wake);
        if (batch.wake === wake) batch.wake = undefined;
        resolve();
      };
      this.roomWaiters.add(wake);
      // Results settling also make room for a batch held by pendingResults.
      batch.wake = wake;
    });
  }

  /** Decides what to do with a message just taken: fail it, start it, hold it or defer it. */
  private admit(job: Job): void {
    const { message } = job;
    let url: URL;
    try {
      url = new URL(message.endpoint);
    } catch {
      return this.finish(job, { kind: 'failed', reason: 'The subscription endpoint is not a URL', code: 'invalid_subscription' });
    }
    if (isPermanentlyRemovedEndpoint(message.endpoint)) {
      return this.finish(job, { kind: 'gone', status: 410, reason: 'The browser revoked this subscription (its endpoint is on .invalid)' });
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      return this.finish(job, { kind: 'failed', reason: 'The subscription endpoint must be an https URL', code: 'invalid_subscription' });
    }
    if (this.allowOrigin && !this.allowOrigin(url.origin)) {
      return this.finish(job, { kind: 'failed', reason: `${url.origin} is not a known push service`, code: 'rejected' });
    }
    if (!Number.isInteger(message.ttl) || message.ttl < 0) {
      return this.finish(job, { kind: 'failed', reason: 'TTL must be a whole number of seconds', code: 'rejected' });
    }
    if (message.topic !== undefined && !isValidTopic(message.topic)) {
      return this.finish(job, { kind: 'failed', reason: 'Topic must be 1 to 32 letters or digits', code: 'rejected' });
    }
    try {
      job.keys = typeof message.keys.p256dh === 'string' ? decodeSubscriberKeys(message.keys as EncodedSubscriberKeys) : (message.keys as SubscriberKeys);
      job.authorization = this.vapidTokens.authorization(url.origin, message.vapid);
      job.lane = this.laneOf(url.origin, message.vapid.publicKey);
    } catch (error) {
      return this.finish(job, { kind: 'failed', reason: errorMessage(error), code: localFailureCode(error) });
    }
    job.path = url.pathname + url.search;
    this.route(job);
  }

  private route(job: Job): void {
    const lane = job.lane;
    if (this.closing) return this.finish(job, { kind: 'deferred', retryAt: this.clock.now(), reason: 'Herald is shutting down', code: null });
    if (lane.paused && lane.pausedUntil - this.clock.now() > this.maxPauseWaitMs) {
      return this.finish(job, this.deferredBy(lane));
    }
    if (this.isReady(lane) && this.canStart()) return this.start(job);
    lane.parked.push(job);
    this.parkedCount++;
    this.parkedLanes.add(lane);
    // The pause timer must keep the process alive while messages wait for it.
    lane.pauseTimer?.ref();
  }

  private deferredBy(lane: Lane): PushOutcome {
    return { kind: 'deferred', retryAt: lane.pausedUntil, reason: `${lane.origin.origin} is paused`, code: lane.pauseCode };
  }

  private isReady(lane: Lane): boolean {
    if (lane.paused) return false;
    if (lane.probing && lane.inFlight >= 1) return false;
    return lane.origin.inFlight < this.maxInFlightPerOrigin;
  }

  /** Starts parked messages whose origin is ready, then lets batches take more. */
  private schedule(): void {
    if (this.parkedCount > 0) {
      for (const lane of this.parkedLanes) {
        if (!this.canStart()) break;
        while (lane.parked.length > 0 && this.canStart() && this.isReady(lane)) {
          this.parkedCount--;
          this.start(lane.parked.shift()!);
        }
        if (lane.parked.length === 0) this.parkedLanes.delete(lane);
      }
    }
    this.wakeRoomWaiters();
  }

  private start(job: Job): void {
    const lane = job.lane;
    this.inFlight++;
    lane.inFlight++;
    lane.origin.inFlight++;
    lane.lastUsed = lane.origin.lastUsed = this.clock.now();
    if (job.body) return this.dispatch(job);
    this.encryptor.encrypt(job.message.payload, job.keys).then(
      (body) => {
        job.body = body;
        // A 429 may have paused the lane while this message was being encrypted.
        if (!lane.paused) return this.dispatch(job);
        this.release(job);
        this.route(job);
        this.schedule();
      },
      (error: unknown) => {
        this.release(job);
        this.finish(job, { kind: 'failed', reason: errorMessage(error), code: localFailureCode(error) });
        this.schedule();
      },
    );
  }

  private dispatch(job: Job): void {
    const { message, lane } = job;
    const origin = lane.origin;
    const ttl = Math.min(message.ttl, MAX_TTL_SECONDS);
    const last = lane.headersFor;
    if (!lane.headers || last.authorization !== job.authorization || last.ttl !== ttl || last.urgency !== message.urgency || last.topic !== message.topic) {
      // Lower-case names: HTTP/2 requires them, HTTP/1.1 does not care.
      const headers: Record<string, string> = {
        ttl: String(ttl),
        'content-encoding': 'aes128gcm',
        'content-type': 'application/octet-stream',
        authorization: job.authorization,
      };
      if (message.urgency) headers.urgency = message.urgency;
      if (message.topic) headers.topic = message.topic;
      lane.headers = headers;
      lane.headersFor = { authorization: job.authorization, ttl, urgency: message.urgency, topic: message.topic };
    }
    job.timer = setTimeout(() => this.onDeadline(job), this.requestTimeoutMs);
    job.dispatchedAt = performance.now();
    try {
      origin.pool.dispatch({ method: 'POST', path: job.path, headers: lane.headers, body: job.body!, idempotent: false, blocking: true }, job);
    } catch (error) {
      this.onAnswer(job, error instanceof Error ? error : new Error(String(error)));
    }
  }

  private onDeadline(job: Job): void {
    if (job.finished) return;
    const error = new RequestDeadlineError(this.requestTimeoutMs);
    // Aborting destroys the socket, so a black-holed endpoint does not keep it.
    job.controller?.abort(error);
    this.onAnswer(job, error);
  }

  /** Called by a request's handler when undici is done with it: an answer, or an error. */
  private readonly onAnswer = (job: Job, error: Error | undefined): void => {
    if (job.finished) return;
    clearTimeout(job.timer);
    this.release(job);
    if (job.dispatchedAt !== undefined) this.metrics?.pushAnswered(job.lane.origin.service, (performance.now() - job.dispatchedAt) / 1000);
    let outcome: PushOutcome;
    if (job.status >= 200) {
      // The status line arrived: it decides, even if the body then failed.
      job.lane.origin.transportFailures = 0;
      outcome = this.classify(job);
    } else {
      outcome = this.transportFailure(job, error ?? new Error('the connection closed without an answer'));
    }
    this.finish(job, outcome);
    this.schedule();
  };

  private release(job: Job): void {
    this.inFlight--;
    job.lane.inFlight--;
    job.lane.origin.inFlight--;
    if (this.inFlight === 0 && this.idleWaiters.length > 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private classify(job: Job): PushOutcome {
    const lane = job.lane;
    if (lane.probing && job.status !== 429) lane.probing = false;
    const verdict = classifyAnswer(job.status, job.reasonText(), job.retryAfter, this.clock.now(), this.retryPolicy);
    switch (verdict.kind) {
      case 'rate-limited':
        return { kind: 'rate-limited', status: 429, reason: verdict.reason, retryAt: this.pauseLane(lane, verdict.pauseMs, 'rate_limited', '429 Too Many Requests') };
      case 'retryable': {
        const { status, reason, code } = verdict;
        if (verdict.pauseOriginMs !== undefined) {
          return { kind: 'retryable', status, reason, code, retryAt: this.pauseOrigin(lane.origin, verdict.pauseOriginMs, code, `${status} Service Unavailable`) };
        }
        return verdict.waitMs === undefined ? { kind: 'retryable', status, reason, code } : { kind: 'retryable', status, reason, code, retryAt: this.clock.now() + verdict.waitMs };
      }
      default:
        return verdict;
    }
  }

  private transportFailure(job: Job, error: Error): PushOutcome {
    const origin = job.lane.origin;
    const deadline = error instanceof RequestDeadlineError;
    const code = classifyTransportError(error, deadline);
    const reason = deadline ? `timeout: ${error.message}` : `connection: ${describeError(error)}`;
    if (++origin.transportFailures >= this.transportFailuresBeforePause) {
      origin.transportFailures = 0;
      const retryAt = this.pauseOrigin(origin, this.transportFailurePauseMs, code, `${this.transportFailuresBeforePause} failed requests in a row (${reason})`);
      return { kind: 'retryable', retryAt, reason, code };
    }
    return { kind: 'retryable', reason, code };
  }

  /** Pauses every sender on an origin (the push service is unreachable or unavailable); lanes opened meanwhile start paused. */
  private pauseOrigin(origin: OriginState, delayMs: number, code: RetryableReason, reason: string): number {
    const until = this.clock.now() + delayMs;
    if (until > origin.pausedUntil) {
      origin.pausedUntil = until;
      origin.pauseCode = code;
    }
    let latest = until;
    for (const lane of origin.lanes.values()) latest = Math.max(latest, this.pauseLane(lane, delayMs, code, reason));
    return latest;
  }

  /** Pauses a lane for `delayMs` (extending, never shortening, a pause in force), at most the longest Retry-After honoured. Returns when it ends. */
  private pauseLane(lane: Lane, delayMs: number, code: RetryableReason, reason: string): number {
    const wait = Math.min(delayMs, this.retryPolicy.maxRetryAfterMs);
    const until = this.clock.now() + wait;
    if (lane.paused && lane.pausedUntil >= until) return lane.pausedUntil;
    lane.paused = true;
    lane.pausedUntil = until;
    lane.pauseCode = code;
    if (lane.pauseTimer) clearTimeout(lane.pauseTimer);
    lane.pauseTimer = setTimeout(() => this.resume(lane), wait);
    if (lane.parked.length === 0) lane.pauseTimer.unref();
    this.onOriginPaused?.(lane.origin.origin, until, reason, lane.key);
    // Messages held for this lane will not be waited for if the pause is long.
    if (wait > this.maxPauseWaitMs && lane.parked.length > 0) {
      const held = lane.parked.splice(0);
      this.parkedCount -= held.length;
      this.parkedLanes.delete(lane);
      for (const job of held) this.finish(job, this.deferredBy(lane));
    }
    return until;
  }

  private resume(lane: Lane): void {
    lane.paused = false;
    lane.pauseTimer = undefined;
    lane.probing = true;
    this.schedule();
  }

  /** The message's lane; a lane opened while its origin is paused starts paused for the rest of that pause. */
  private laneOf(originUrl: string, vapidKey: string): Lane {
    const { lane, opened } = this.lanes.lane(originUrl, vapidKey);
    const left = lane.origin.pausedUntil - this.clock.now();
    if (opened && left > 0) this.pauseLane(lane, left, lane.origin.pauseCode, `${originUrl} is paused`);
    return lane;
  }

  private finish(job: Job, outcome: PushOutcome): void {
    if (job.finished) return;
    job.finished = true;
    job.body = undefined;
    // A message refused before it had a lane (not a URL, say) still counts, under its endpoint's service.
    this.metrics?.pushFinished((job.lane as Lane | undefined)?.origin.service ?? pushServiceOf(job.message.endpoint), outcome.kind, reasonCodeOf(outcome));
    job.deliver(outcome);
  }

}

/** The outcome model's reason code of an outcome (docs/delivery.md, "Outcomes"), for the metrics' `reason` label. */
function reasonCodeOf(outcome: PushOutcome): string | undefined {
  if (outcome.kind === 'gone') return 'gone';
  if (outcome.kind === 'rate-limited') return 'rate_limited';
  return 'code' in outcome ? (outcome.code ?? undefined) : undefined;
}
