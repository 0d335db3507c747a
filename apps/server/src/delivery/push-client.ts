// Sends encrypted Web Push messages (RFC 8030 §5) and says what happened to
// each one. It owns everything between "this subscriber should get these
// bytes" and "the push service answered X", and schedules the messages; the
// parts live beside it:
//
// - push-lanes.ts: one undici keep-alive pool per push-service origin, with a
//   bounded number of connections, and per origin one lane per sender (VAPID
//   key); the client bounds requests in flight per origin;
// - push-slots.ts: pushes in flight plus outcomes not yet recorded stay within
//   `concurrency` overall (the most a crash re-sends); messages are encrypted
//   before they take a slot, at most `encryptAhead` at a time;
// - push-request.ts: one request, under an overall deadline (queueing,
//   connecting, sending and the answer), so a black-holed endpoint cannot pin
//   sockets or memory;
// - RFC 8291 encryption (encryption-pool.ts, worker threads by default) and
//   the VAPID header from a token cache (vapid.ts, signed once per push-service
//   origin and site key);
// - push-back-pressure.ts: what an answer makes of a message, and the pauses
//   it asks for: a 429 pauses that origin for the VAPID key it throttled (a
//   "lane") until its Retry-After has passed, at most an hour; other sites and
//   other origins keep flowing. Transport failures and a 503 with Retry-After
//   pause the whole origin. A long pause is not waited out: the message comes
//   back `deferred` with the time to try again;
// - push-batch.ts: a batch API that pulls messages from an iterator only when
//   there is room, so a fan-out of any size runs in bounded memory.
//
// Retrying is the caller's decision (it owns the delivery rows): outcomes say
// whether a message is done (sent / gone / failed) or should be tried again
// (rate-limited / deferred / retryable), and when. Every point in time the
// client keeps (pauses, Retry-After, lane use) is read from its one injected
// clock; the metrics' latencies are durations, measured with performance.now().
import os from 'node:os';
import { systemClock, type Clock } from '../platform/clock';
import { decodeSubscriberKeys, type EncodedSubscriberKeys, type SubscriberKeys } from './encryption';
import { createEncryptionPool, type PushEncryptor } from './encryption-pool';
import { BackPressure } from './push-back-pressure';
import { sendAllFrom, type BatchSender } from './push-batch';
import { DEFAULT_PUSH_CONCURRENCY, DEFAULT_PUSH_CONNECTIONS, type PushClientOptions, type PushClientStats, type PushMetrics, type SendAllSummary } from './push-client-options';
import { PushLanes } from './push-lanes';
import { checkPushMessage, type PushMessage } from './push-message';
import { errorMessage, localFailureCode, reasonCodeOf, type PushOutcome } from './push-outcome';
import { Job, type Lane } from './push-request';
import { pushServiceOf } from './push-services';
import { PushSlots } from './push-slots';
import { VapidTokenCache } from './vapid';

class PushClientClosedError extends Error {
  constructor() {
    super('The push client is closed');
    this.name = 'PushClientClosedError';
  }
}

export class PushClient {
  private readonly maxInFlightPerOrigin: number;
  private readonly requestTimeoutMs: number;
  private readonly encryptor: PushEncryptor;
  private readonly ownsEncryptor: boolean;
  private readonly vapidTokens: VapidTokenCache;
  private readonly clock: Clock;
  private readonly allowOrigin: ((origin: string) => boolean) | undefined;
  private readonly metrics: PushMetrics | undefined;

  private readonly slots: PushSlots;
  private readonly lanes: PushLanes;
  private readonly backPressure: BackPressure;
  /** What sendAll's batches see of this client. */
  private readonly batchSender: BatchSender;
  /** Lanes with parked messages, in the order they got them. */
  private readonly parkedLanes = new Set<Lane>();
  private closing = false;
  private closePromise: Promise<void> | undefined;

  constructor(options: PushClientOptions = {}) {
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_PUSH_CONCURRENCY);
    this.maxInFlightPerOrigin = Math.max(1, options.maxInFlightPerOrigin ?? concurrency);
    const connectionsPerOrigin = Math.max(1, options.connectionsPerOrigin ?? DEFAULT_PUSH_CONNECTIONS);
    this.requestTimeoutMs = Math.max(1, options.requestTimeoutMs ?? 15_000);
    this.ownsEncryptor = !options.encryptor;
    this.encryptor =
      options.encryptor ??
      createEncryptionPool({ threads: options.encryptionThreads ?? Math.min(4, os.availableParallelism()) });
    this.clock = options.clock ?? systemClock;
    this.vapidTokens = options.vapidTokens ?? new VapidTokenCache({ clock: this.clock });
    this.allowOrigin = options.allowOrigin;
    this.metrics = options.metrics;
    this.slots = new PushSlots(concurrency, Math.max(1, options.maxParked ?? concurrency * 4), Math.max(1, options.encryptAhead ?? concurrency));
    const keepAlive = options.keepAliveTimeoutMs ?? 30_000;
    this.lanes = new PushLanes({
      connections: connectionsPerOrigin,
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
    this.backPressure = new BackPressure({
      clock: this.clock,
      retryPolicy: { defaultRetryAfterMs: options.defaultRetryAfterMs ?? 60_000, maxRetryAfterMs: options.maxRetryAfterMs ?? 60 * 60 * 1000 },
      maxPauseWaitMs: Math.max(0, options.maxPauseWaitMs ?? 5_000),
      transportFailuresBeforePause: Math.max(1, options.transportFailuresBeforePause ?? 10),
      transportFailurePauseMs: options.transportFailurePauseMs ?? 30_000,
      onOriginPaused: options.onOriginPaused,
      deferParked: (lane) => this.deferParked(lane),
      resumed: () => this.schedule(),
    });
    this.batchSender = {
      slots: this.slots,
      isClosing: () => this.closing,
      submit: (message, deliver) => this.admit(new Job(this.onAnswer, message, deliver)),
      schedule: () => this.schedule(),
    };
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
  sendAll<Ref>(
    messages: Iterable<PushMessage<Ref>> | AsyncIterable<PushMessage<Ref>>,
    onResult: (message: PushMessage<Ref>, outcome: PushOutcome) => void | Promise<void>,
  ): Promise<SendAllSummary> {
    if (this.closing) return Promise.reject(new PushClientClosedError());
    return sendAllFrom(this.batchSender, messages, onResult);
  }

  /** Counts for monitoring and tests. */
  stats(): PushClientStats {
    return { inFlight: this.slots.inFlight, encrypting: this.slots.encrypting, awaitingResults: this.slots.awaitingResults, parked: this.slots.parked, origins: this.lanes.stats() };
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
    this.slots.wakeAllRoomWaiters();
    const now = this.clock.now();
    for (const origin of this.lanes.all()) {
      for (const lane of origin.lanes.values()) {
        for (const job of lane.parked.splice(0)) this.finish(job, { kind: 'deferred', retryAt: now, reason: 'Herald is shutting down', code: null });
        if (lane.pauseTimer) clearTimeout(lane.pauseTimer);
      }
    }
    this.parkedLanes.clear();
    this.slots.parked = 0;
    if (this.slots.inFlight > 0 || this.slots.encrypting > 0) await this.slots.whenIdle();
    await this.lanes.close();
    if (this.ownsEncryptor) await this.encryptor.close();
  }

  // ---- scheduling ---------------------------------------------------------

  /** Decides what to do with a message just taken: fail it, start it, hold it or defer it. */
  private admit(job: Job): void {
    const { message } = job;
    const check = checkPushMessage(message, this.allowOrigin);
    if (!check.ok) return this.finish(job, check.outcome);
    const { url } = check;
    try {
      job.keys = typeof message.keys.p256dh === 'string' ? decodeSubscriberKeys(message.keys as EncodedSubscriberKeys) : (message.keys as SubscriberKeys);
      job.authorization = this.vapidTokens.authorization(url.origin, message.vapid);
      job.lane = this.laneOf(url.origin, message.vapid.publicKey);
    } catch (error) {
      return this.finish(job, { kind: 'failed', reason: errorMessage(error), code: localFailureCode(error) });
    }
    job.path = url.pathname + url.search;
    this.encryptThenRoute(job);
  }

  /**
   * Encrypts the message before it takes a slot (push-slots.ts): the
   * encryption threads get whole batches while the slots wait for answers and
   * for recording. A message its lane would defer anyway is not encrypted.
   */
  private encryptThenRoute(job: Job): void {
    if (this.closing || this.backPressure.isPausedPastWait(job.lane)) return this.route(job);
    this.slots.encryptionStarted();
    this.encryptor.encrypt(job.message.payload, job.keys).then(
      (body) => {
        job.body = body;
        this.slots.encryptionEnded();
        this.route(job);
        this.slots.wakeRoomWaiters();
      },
      (error: unknown) => {
        this.slots.encryptionEnded();
        this.finish(job, { kind: 'failed', reason: errorMessage(error), code: localFailureCode(error) });
        this.slots.wakeRoomWaiters();
      },
    );
  }

  /** The message's lane; a lane opened while its origin is paused starts paused for the rest of that pause. */
  private laneOf(originUrl: string, vapidKey: string): Lane {
    const { lane, opened } = this.lanes.lane(originUrl, vapidKey);
    if (opened) this.backPressure.laneOpened(lane);
    return lane;
  }

  private route(job: Job): void {
    const lane = job.lane;
    if (this.closing) return this.finish(job, { kind: 'deferred', retryAt: this.clock.now(), reason: 'Herald is shutting down', code: null });
    if (this.backPressure.isPausedPastWait(lane)) return this.finish(job, this.backPressure.deferredBy(lane));
    if (this.isReady(lane) && this.slots.canStart()) return this.start(job);
    lane.parked.push(job);
    this.slots.parked++;
    this.parkedLanes.add(lane);
    // The pause timer must keep the process alive while messages wait for it.
    lane.pauseTimer?.ref();
  }

  private isReady(lane: Lane): boolean {
    if (lane.paused) return false;
    if (lane.probing && lane.inFlight >= 1) return false;
    return lane.origin.inFlight < this.maxInFlightPerOrigin;
  }

  /** Starts parked messages whose origin is ready, then lets batches take more. */
  private schedule(): void {
    if (this.slots.parked > 0) {
      for (const lane of this.parkedLanes) {
        if (!this.slots.canStart()) break;
        while (lane.parked.length > 0 && this.slots.canStart() && this.isReady(lane)) {
          this.slots.parked--;
          this.start(lane.parked.shift()!);
        }
        if (lane.parked.length === 0) this.parkedLanes.delete(lane);
      }
    }
    this.slots.wakeRoomWaiters();
  }

  /** Hands back, deferred, the messages parked on a lane paused for longer than the client waits. */
  private deferParked(lane: Lane): void {
    const held = lane.parked.splice(0);
    this.slots.parked -= held.length;
    this.parkedLanes.delete(lane);
    for (const job of held) this.finish(job, this.backPressure.deferredBy(lane));
  }

  private start(job: Job): void {
    const lane = job.lane;
    this.slots.started();
    lane.inFlight++;
    lane.origin.inFlight++;
    lane.lastUsed = lane.origin.lastUsed = this.clock.now();
    job.dispatch(this.requestTimeoutMs);
  }

  /** Called by a request's handler when undici is done with it (an answer, or an error), and at its deadline. */
  private readonly onAnswer = (job: Job, error: Error | undefined): void => {
    if (job.finished) return;
    clearTimeout(job.timer);
    this.release(job);
    if (job.dispatchedAt !== undefined) this.metrics?.pushAnswered(job.lane.origin.service, (performance.now() - job.dispatchedAt) / 1000);
    const outcome =
      job.status >= 200
        ? this.backPressure.outcomeOfAnswer(job)
        : this.backPressure.outcomeOfTransportFailure(job, error ?? new Error('the connection closed without an answer'));
    this.finish(job, outcome);
    this.schedule();
  };

  private release(job: Job): void {
    job.lane.inFlight--;
    job.lane.origin.inFlight--;
    this.slots.released();
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
