// Prometheus metrics of one process (README, "Metrics"): one registry per
// process, typed recorders for the places that count things, and gauges read
// at scrape time from the database and the queue. Code elsewhere calls the
// methods of `Metrics`; only this file knows prom-client.
import client from 'prom-client';

/** Why a request ended, from its HTTP status: the `result` label of request counters. */
export type RequestResult = 'created' | 'updated' | 'accepted' | 'rate_limited' | 'rejected' | 'unavailable' | 'error';

/** A subscribe answers 201 for a new subscriber and 200 for a known endpoint; other routes answer 200 when they took the request. */
export function requestResultOf(statusCode: number, successes: Partial<Record<number, RequestResult>> = {}): RequestResult {
  if (statusCode === 429) return 'rate_limited';
  if (statusCode === 503) return 'unavailable';
  if (statusCode >= 500) return 'error';
  if (statusCode >= 400) return 'rejected';
  return successes[statusCode] ?? 'accepted';
}

/** What the delivery backlog looks like now (from the database). */
export interface DeliveryBacklog {
  pending: number;
  /** Pending deliveries a worker holds right now (lease in force). */
  leased: number;
  /** Age of the oldest pending delivery, in seconds (0 when none). */
  oldestPendingSeconds: number;
}

/** Beacons stored and not yet folded into the counters (docs/delivery.md, "How beacons are counted"). */
export interface BeaconBacklog {
  unfolded: number;
  /** Age of the oldest of them, in seconds (0 when none): above a few seconds, the fold is behind or not running. */
  oldestUnfoldedSeconds: number;
}

/** Jobs per queue and state (waiting, active, delayed, failed). */
export type QueueJobCounts = Record<string, Record<string, number>>;

export interface Metrics {
  /** The text Prometheus scrapes (`GET /metrics`). */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** One push's outcome, by push service (`delivery/push-services.ts`) and outcome kind. */
  pushFinished(pushService: string, outcome: string, reason: string | undefined): void;
  /** How long a push service took to answer one request (or to fail it). */
  pushAnswered(pushService: string, seconds: number): void;
  /** A public subscribe request answered with `statusCode`. */
  subscribeAnswered(statusCode: number): void;
  /** A delivered/clicked beacon answered with `statusCode`. */
  beaconAnswered(statusCode: number): void;
  /** A scheduled RSS feed poll ended (checked, error, busy, gone, paused). */
  feedPolled(result: string): void;
  mailSent(ok: boolean): void;
  /** Time from a run's due time to its claim by a scheduler. */
  runClaimed(lagSeconds: number): void;
  /** Reads the backlog gauges from `read` at each scrape. */
  watchDeliveryBacklog(read: () => Promise<DeliveryBacklog>): void;
  /** Reads the beacon gauges from `read` at each scrape. */
  watchBeaconBacklog(read: () => Promise<BeaconBacklog>): void;
  /** Reads the queue gauges from `read` at each scrape. */
  watchQueue(read: () => Promise<QueueJobCounts>): void;
}

/** Push request latency buckets, seconds: push services answer in tens of milliseconds; the deadline is 15 s. */
const PUSH_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
const CLAIM_LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  // Process and Node.js metrics: CPU, memory, handles, GC, event-loop lag (nodejs_eventloop_lag_*).
  client.collectDefaultMetrics({ register: registry });

  const pushes = new client.Counter({
    name: 'herald_pushes_total',
    help: 'Push messages by push service, outcome (sent, gone, rate-limited, deferred, retryable, failed) and reason code (unreachable, timeout, rate_limited, rejected, too_large, gone, server_error, invalid_subscription; "none" for a message sent).',
    labelNames: ['push_service', 'outcome', 'reason'] as const,
    registers: [registry],
  });
  const pushLatency = new client.Histogram({
    name: 'herald_push_request_duration_seconds',
    help: 'Time from sending a push request to its answer (or its failure), by push service.',
    labelNames: ['push_service'] as const,
    buckets: PUSH_LATENCY_BUCKETS,
    registers: [registry],
  });
  const subscribes = new client.Counter({
    name: 'herald_subscribe_requests_total',
    help: 'Public subscribe requests by result (created, updated, rate_limited, rejected, unavailable, error).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const beacons = new client.Counter({
    name: 'herald_beacon_requests_total',
    help: 'Delivered/clicked beacons by result (accepted, rate_limited, rejected, unavailable, error).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const feedPolls = new client.Counter({
    name: 'herald_feed_polls_total',
    help: 'Scheduled RSS feed polls by result (checked, error, busy, gone, paused).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const mails = new client.Counter({
    name: 'herald_mails_total',
    help: 'Mails handed to SMTP (or the outbox) by result (sent, failed).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const claimLag = new client.Histogram({
    name: 'herald_scheduler_claim_lag_seconds',
    help: 'Time from a run being due to a scheduler claiming it.',
    buckets: CLAIM_LAG_BUCKETS,
    registers: [registry],
  });

  const oldestPending = new client.Gauge({
    name: 'herald_deliveries_oldest_pending_age_seconds',
    help: 'Age of the oldest pending delivery (0 when none is pending).',
    registers: [registry],
  });
  const deliveries = new client.Gauge({
    name: 'herald_deliveries',
    help: 'Deliveries not finished, by state: pending (all of them) and leased (held by a worker now).',
    labelNames: ['state'] as const,
    registers: [registry],
  });
  const oldestUnfolded = new client.Gauge({
    name: 'herald_beacons_oldest_unfolded_age_seconds',
    help: 'Age of the oldest delivered/clicked beacon not yet counted (0 when none); the fold runs about every second.',
    registers: [registry],
  });
  const unfolded = new client.Gauge({
    name: 'herald_beacons_unfolded',
    help: 'Delivered/clicked beacons stored and not yet folded into the counters.',
    registers: [registry],
  });
  const queueJobs = new client.Gauge({
    name: 'herald_queue_jobs',
    help: 'Jobs in the queue by queue and state (waiting, active, delayed, failed).',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
  });
  let readBacklog: (() => Promise<DeliveryBacklog>) | undefined;
  let readBeacons: (() => Promise<BeaconBacklog>) | undefined;
  let readQueue: (() => Promise<QueueJobCounts>) | undefined;

  /**
   * The gauges read from the database and the queue, all set before the
   * registry writes any of them: a gauge's own collect() would run while the
   * registry writes the others, so a figure set from another gauge's read
   * would show the scrape before's value.
   */
  async function refreshGauges(): Promise<void> {
    const [backlog, beacons, queue] = await Promise.all([readBacklog?.(), readBeacons?.(), readQueue?.()]);
    if (backlog) {
      deliveries.set({ state: 'pending' }, backlog.pending);
      deliveries.set({ state: 'leased' }, backlog.leased);
      oldestPending.set(backlog.oldestPendingSeconds);
    }
    if (beacons) {
      unfolded.set(beacons.unfolded);
      oldestUnfolded.set(beacons.oldestUnfoldedSeconds);
    }
    if (queue) {
      queueJobs.reset();
      for (const [name, states] of Object.entries(queue)) {
        for (const [state, count] of Object.entries(states)) queueJobs.set({ queue: name, state }, count);
      }
    }
  }

  return {
    async scrape() {
      await refreshGauges();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    pushFinished: (pushService, outcome, reason) => pushes.inc({ push_service: pushService, outcome, reason: reason ?? 'none' }),
    pushAnswered: (pushService, seconds) => pushLatency.observe({ push_service: pushService }, seconds),
    subscribeAnswered: (statusCode) => subscribes.inc({ result: requestResultOf(statusCode, { 201: 'created', 200: 'updated' }) }),
    beaconAnswered: (statusCode) => beacons.inc({ result: requestResultOf(statusCode) }),
    feedPolled: (result) => feedPolls.inc({ result }),
    mailSent: (ok) => mails.inc({ result: ok ? 'sent' : 'failed' }),
    runClaimed: (lagSeconds) => claimLag.observe(Math.max(0, lagSeconds)),
    watchDeliveryBacklog(read) {
      readBacklog = read;
    },
    watchBeaconBacklog(read) {
      readBeacons = read;
    },
    watchQueue(read) {
      readQueue = read;
    },
  };
}
