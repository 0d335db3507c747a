// What a PushClient is configured with and what it reports (stats, metrics).
import type { PushServiceName } from '@herald/contracts';
import type { Pool } from 'undici';
import type { Clock } from '../platform/clock';
import type { PushEncryptor } from './encryption-pool';
import type { PushOutcomeKind } from './push-outcome';
import type { VapidTokenCache } from './vapid';

/**
 * PUSH_CONCURRENCY's default: pushes in flight plus outcomes not yet recorded,
 * per process. A real push service answers after tens of milliseconds, and a
 * slot is held for that round trip and the ~20–40 ms its outcome takes to be
 * recorded, so a process sends at most this ÷ (round trip + record time):
 * 512 keeps two cores busy at a 50 ms round trip (README, "Performance"). It
 * is also the most a crashed process sends twice (docs/delivery.md).
 */
export const DEFAULT_PUSH_CONCURRENCY = 512;

/**
 * PUSH_CONNECTIONS's default: keep-alive connections per push-service origin
 * per process. HTTP/1.1 carries one request at a time per connection, so a
 * process sends at most this ÷ round trip to one push service
 * (docs/web-push.md, "How the big push services behave"): 256 carry 5,120
 * messages a second at 50 ms, more than two cores encrypt.
 */
export const DEFAULT_PUSH_CONNECTIONS = 256;

/** What the client reports for monitoring; platform/metrics.ts implements it. */
export interface PushMetrics {
  /** Every message's outcome, once, with its failure reason code when it has one. */
  pushFinished(pushService: PushServiceName, outcome: PushOutcomeKind, reason: string | undefined): void;
  /** Time from dispatching a request to its answer or failure. */
  pushAnswered(pushService: PushServiceName, seconds: number): void;
}

export interface PushClientOptions {
  /** Messages sent and not yet answered and recorded, all origins together (default DEFAULT_PUSH_CONCURRENCY, PUSH_CONCURRENCY): the most a crash re-sends. */
  concurrency?: number;
  /** Messages being encrypted ahead of a free slot, all origins together (default: `concurrency`). */
  encryptAhead?: number;
  /** Messages in flight to one origin (default: `concurrency`). Lower it to keep a slow origin from taking every slot. */
  maxInFlightPerOrigin?: number;
  /** TCP/TLS connections per push-service origin (default DEFAULT_PUSH_CONNECTIONS, PUSH_CONNECTIONS). */
  connectionsPerOrigin?: number;
  /** Overall deadline of one request, from dispatch to the end of the answer (default 15 s). */
  requestTimeoutMs?: number;
  /** A paused origin whose pause ends within this is waited for; later pauses defer (default 5 s). */
  maxPauseWaitMs?: number;
  /** Pause after a 429 without Retry-After (default 60 s). */
  defaultRetryAfterMs?: number;
  /** Longest pause honoured from a Retry-After (default 1 h); messages past it are deferred to its end, not dropped. */
  maxRetryAfterMs?: number;
  /** Consecutive timeouts/connection failures on an origin before it is paused (default 10). */
  transportFailuresBeforePause?: number;
  /** That pause (default 30 s); afterwards one probe request goes first. */
  transportFailurePauseMs?: number;
  /** Messages held back for a paused or busy origin, all origins together (default 4 × concurrency). */
  maxParked?: number;
  /**
   * Encryption worker threads (default: one per core, at most 4; 0 encrypts on
   * this thread). Encryption is ~75% of a send's CPU; on worker threads it runs
   * beside the HTTP work instead of in turn with it. Ignored with `encryptor`.
   */
  encryptionThreads?: number;
  /** A shared encryptor; the client does not close it. */
  encryptor?: PushEncryptor;
  /** A shared VAPID token cache. */
  vapidTokens?: VapidTokenCache;
  clock?: Clock;
  /** TLS options for the connections (tests pass their CA here); Node's default CAs and NODE_EXTRA_CA_CERTS apply otherwise. */
  connect?: Pool.Options['connect'];
  /**
   * Offer HTTP/2 by ALPN (default false). HTTP/1.1 with keep-alive is what the
   * web-push library uses with every push service, and undici spends about a
   * quarter more CPU per request on HTTP/2; turn it on to need fewer sockets.
   */
  allowH2?: boolean;
  /** Idle keep-alive time of a connection (default 30 s; a server's shorter Keep-Alive hint wins). */
  keepAliveTimeoutMs?: number;
  /** Refuses endpoints whose origin is not a push service (docs/security.md, SSRF); see pushOriginPolicy(). */
  allowOrigin?: (origin: string) => boolean;
  /**
   * Told whenever a push service is paused: for one VAPID key (429; `vapidKey`
   * set) or for every sender (503 with Retry-After, repeated transport
   * failures; once per lane it pauses).
   */
  onOriginPaused?: (origin: string, until: number, reason: string, vapidKey: string) => void;
  metrics?: PushMetrics;
}

export interface SendAllSummary {
  /** Messages that got an outcome. */
  total: number;
  counts: Record<PushOutcomeKind, number>;
  /** True when close() stopped the batch before its source was exhausted. */
  stopped: boolean;
}

export interface LaneStats {
  /** The VAPID public key of the sender. */
  vapidKey: string;
  inFlight: number;
  parked: number;
  paused: boolean;
  pausedUntil: number | null;
}

export interface OriginStats {
  origin: string;
  inFlight: number;
  parked: number;
  /** True while any of its lanes is paused. */
  paused: boolean;
  pausedUntil: number | null;
  connections: number;
  lanes: LaneStats[];
}

export interface PushClientStats {
  /** Requests sent and not yet answered. */
  inFlight: number;
  /** Messages being encrypted, ahead of a slot. */
  encrypting: number;
  /** Outcomes handed to an onResult that has not settled yet (they count against the concurrency). */
  awaitingResults: number;
  parked: number;
  origins: OriginStats[];
}
