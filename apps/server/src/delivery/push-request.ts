// One push request on its way: the message, its encrypted body and headers,
// and undici's handler that collects the answer (status, Retry-After, the start
// of an error body) for the PushClient to classify.
import type { PushServiceName } from '@herald/contracts';
import type { Dispatcher, Pool } from 'undici';
import type { SubscriberKeys } from './encryption';
import { SUCCESS_STATUSES, type PushOutcome, type RetryableReason } from './push-outcome';
import type { PushMessage, Urgency } from './push-message';

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

export /** One message on its way: it is also undici's handler for its request. */
class Job implements Dispatcher.DispatchHandler {
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

  reasonText(): string {
    if (!this.reasonChunks) return '';
    return Buffer.concat(this.reasonChunks).subarray(0, MAX_REASON_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
  }
}

