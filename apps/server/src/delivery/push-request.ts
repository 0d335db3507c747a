// One push request on its way: the message, its encrypted body and headers
// (RFC 8030 §5: TTL, Urgency, Topic; RFC 8291's aes128gcm; RFC 8292's VAPID
// authorization), sent under one overall deadline, and undici's handler that
// collects the answer (status, Retry-After, the start of an error body) for
// the PushClient to classify (push-back-pressure.ts).
import type { PushServiceName } from '@herald/contracts';
import type { Dispatcher, Pool } from 'undici';
import type { SubscriberKeys } from './encryption';
import { SUCCESS_STATUSES, type PushOutcome, type RetryableReason } from './push-outcome';
import { MAX_TTL_SECONDS, type PushMessage, type Urgency } from './push-message';

const MAX_REASON_BYTES = 512;

/**
 * Per push-service origin: its connection pool, and its lanes. Transport
 * failures (the network) and a 503 with Retry-After (the service is down) are
 * the origin's, so they pause every lane of it.
 */
export interface OriginState {
  readonly origin: string;
  /** Its push service, the metrics label. */
  readonly service: PushServiceName;
  readonly pool: Pool;
  inFlight: number;
  transportFailures: number;
  /** An origin-wide pause in force until then (0: none); lanes created meanwhile start paused. */
  pausedUntil: number;
  pauseCode: RetryableReason;
  lastUsed: number;
  readonly lanes: Map<string, Lane>;
}

/**
 * One sender on one push service: the origin and the VAPID key the messages
 * are signed with. A 429 is the push service throttling that sender, so it
 * pauses this lane only: one site's burst cannot stall every other site's
 * traffic to the same push service (docs/security.md, "Push-service answers
 * across tenants").
 */
export interface Lane {
  readonly key: string;
  readonly origin: OriginState;
  inFlight: number;
  readonly parked: Job[];
  paused: boolean;
  pausedUntil: number;
  /** Why it is paused: the code deferred messages carry. */
  pauseCode: RetryableReason;
  pauseTimer: NodeJS.Timeout | undefined;
  /** After a pause, one request goes first; the rest wait for its answer. */
  probing: boolean;
  lastUsed: number;
  /** The last request's headers, reused while they stay the same (a fan-out sends identical headers). */
  headers: Record<string, string> | undefined;
  headersFor: { authorization: string; ttl: number; urgency: Urgency | undefined; topic: string | undefined };
}

export class RequestDeadlineError extends Error {
  constructor(ms: number) {
    super(`no complete answer within ${ms} ms`);
    this.name = 'RequestDeadlineError';
  }
}

/** One message on its way: it is also undici's handler for its request. */
export class Job implements Dispatcher.DispatchHandler {
  lane!: Lane;
  path = '';
  authorization = '';
  keys!: SubscriberKeys;
  body: Buffer | undefined;
  controller: Dispatcher.DispatchController | undefined;
  timer: NodeJS.Timeout | undefined;
  /** performance.now() when the request was handed to undici (its latency is measured from there). */
  dispatchedAt: number | undefined;
  started = false;
  finished = false;
  status = 0;
  retryAfter: string | undefined;
  reasonChunks: Buffer[] | undefined;
  reasonBytes = 0;

  constructor(
    /** Told when undici is done with the request: an answer (status set) or an error. */
    readonly onAnswer: (job: Job, error: Error | undefined) => void,
    readonly message: PushMessage<unknown>,
    readonly deliver: (outcome: PushOutcome) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.started = true;
    // The deadline passed while the request waited for a connection.
    if (this.finished) controller.abort(new RequestDeadlineError(0));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.status = statusCode;
    const retryAfter = headers['retry-after'];
    this.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    // Only failures need their body, and only its start, for the reason.
    if (SUCCESS_STATUSES.has(this.status) || this.reasonBytes >= MAX_REASON_BYTES) return;
    (this.reasonChunks ??= []).push(chunk);
    this.reasonBytes += chunk.length;
  }

  onResponseEnd(): void {
    this.onAnswer(this, undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.onAnswer(this, error);
  }

  /**
   * Hands the request to its origin's pool under the overall deadline
   * (queueing, connecting, sending and the answer), so a black-holed endpoint
   * cannot pin a socket or memory. Needs `body`, `path` and `authorization`.
   */
  dispatch(timeoutMs: number): void {
    const lane = this.lane;
    const headers = requestHeaders(lane, this.authorization, this.message);
    this.timer = setTimeout(() => this.onDeadline(timeoutMs), timeoutMs);
    this.dispatchedAt = performance.now();
    try {
      lane.origin.pool.dispatch({ method: 'POST', path: this.path, headers, body: this.body!, idempotent: false, blocking: true }, this);
    } catch (error) {
      this.onAnswer(this, error instanceof Error ? error : new Error(String(error)));
    }
  }

  private onDeadline(timeoutMs: number): void {
    if (this.finished) return;
    const error = new RequestDeadlineError(timeoutMs);
    // Aborting destroys the socket, so a black-holed endpoint does not keep it.
    this.controller?.abort(error);
    this.onAnswer(this, error);
  }

  reasonText(): string {
    if (!this.reasonChunks) return '';
    return Buffer.concat(this.reasonChunks).subarray(0, MAX_REASON_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
  }
}


/** The request's headers: the lane's last ones while they stay the same (a fan-out sends identical headers). */
function requestHeaders(lane: Lane, authorization: string, message: PushMessage<unknown>): Record<string, string> {
  const ttl = Math.min(message.ttl, MAX_TTL_SECONDS);
  const last = lane.headersFor;
  if (!lane.headers || last.authorization !== authorization || last.ttl !== ttl || last.urgency !== message.urgency || last.topic !== message.topic) {
    // Lower-case names: HTTP/2 requires them, HTTP/1.1 does not care.
    const headers: Record<string, string> = {
      ttl: String(ttl),
      'content-encoding': 'aes128gcm',
      'content-type': 'application/octet-stream',
      authorization,
    };
    if (message.urgency) headers.urgency = message.urgency;
    if (message.topic) headers.topic = message.topic;
    lane.headers = headers;
    lane.headersFor = { authorization, ttl, urgency: message.urgency, topic: message.topic };
  }
  return lane.headers;
}
