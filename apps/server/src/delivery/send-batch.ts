import type { FailureReason, PushServiceName } from '@herald/contracts';
import { sql } from 'kysely';
import { z } from 'zod';
import type { RunRow } from '../db/schema';
import { defineJob } from '../jobs/queue';
import { createDeliveryToken } from './delivery-token';
import type { DeliveryDeps } from './engine-deps';
import { NOTIFICATION_TTL_SECONDS, notificationContent, notificationTopic, siteVapidCredentials } from './notification-content';
import { createPayloadTemplate, PushPayloadTooLargeError } from './payload';
import type { SendAllSummary } from './push-client-options';
import type { PushMessage } from './push-message';
import type { PushOutcome } from './push-outcome';
import { pushServiceOf } from './push-services';
import type { DeliveryHealthEntry } from './ports';
import {
  addToNotificationFailures,
  addToRunCounters,
  claimDeliveries,
  completeRunIfFinished,
  extendRunLease,
  hasPendingDeliveries,
  loadRunForSending,
  loadSubscribersForSending,
  renewLeases,
} from './runs';

export const sendBatchJob = defineJob(
  'send-batch',
  z.object({ runId: z.string(), deliveryIds: z.array(z.number().int().positive()).min(1).max(1000) }),
);

interface Claimed {
  deliveryId: number;
  subscriberId: string;
  endpointHash: string | null;
  pushService: PushServiceName;
  attempts: number;
}

/** A push client outcome, or a delivery skipped before it reached the client (its subscriber left meanwhile). */
type Outcome = { claimed: Claimed; outcome: PushOutcome | { kind: 'skipped' } };

/** A batch still running after this long (or ten leases, if longer) is taken to be stuck. */
const BATCH_STUCK_AFTER_MS = 5 * 60_000;

/** Capped, jittered exponential backoff (docs/delivery.md). */
export function retryDelayMs(baseMs: number, attempts: number, random = Math.random): number {
  const capped = Math.min(baseMs * 2 ** Math.max(0, attempts - 1), 5 * 60_000);
  return Math.round(capped * (0.8 + 0.4 * random()));
}

/**
 * Sends one batch of a run's deliveries: claims them (so no other worker sends
 * them meanwhile), renders each subscriber's payload from one template, hands
 * them to the push client, and records each result together with the counters.
 */
export async function sendBatch(deps: DeliveryDeps, payload: { runId: string; deliveryIds: number[] }): Promise<void> {
  const { db, clock, config, secret, pushClient } = deps;
  const loaded = await loadRunForSending(db, payload.runId);
  if (!loaded || loaded.run.status !== 'sending') return;
  const { run, notification, site, ownerEmail } = loaded;

  const claimedRows = await claimDeliveries(db, payload.deliveryIds, clock.now(), config.deliveryLeaseMs);
  if (!claimedRows.length) return;
  const subscribers = new Map((await loadSubscribersForSending(db, claimedRows.map((c) => c.subscriber_id))).map((s) => [s.id, s]));
  const claimed: Claimed[] = claimedRows.map((row) => {
    const subscriber = subscribers.get(row.subscriber_id);
    return {
      deliveryId: row.id,
      subscriberId: row.subscriber_id,
      endpointHash: subscriber?.endpoint_hash ?? null,
      pushService: subscriber ? pushServiceOf(subscriber.endpoint) : 'other',
      attempts: row.attempts,
    };
  });

  const results = new ResultWriter(deps, run);
  let template: ReturnType<typeof createPayloadTemplate>;
  let vapid: ReturnType<typeof siteVapidCredentials>;
  try {
    template = createPayloadTemplate(notificationContent(notification, site), config.publicUrl);
    vapid = siteVapidCredentials(site, ownerEmail, config.vapidSubject);
  } catch (error) {
    // Nothing of this batch can be sent (payload too large, no usable VAPID subject): say why on every delivery.
    const reason = error instanceof Error ? error.message : String(error);
    const code: FailureReason = error instanceof PushPayloadTooLargeError ? 'too_large' : 'rejected';
    for (const c of claimed) results.add({ claimed: c, outcome: { kind: 'failed', reason, code } });
    await results.flush();
    await finishBatch(deps, run.id);
    return;
  }

  const topic = notificationTopic(notification);
  function* messages(): Generator<PushMessage<Claimed>> {
    for (const c of claimed) {
      const subscriber = subscribers.get(c.subscriberId);
      if (!subscriber || !subscriber.is_active) {
        // Unsubscribed (or removed) between fan-out and sending: nothing is pushed; skipped, cause "inactive".
        results.add({ claimed: c, outcome: { kind: 'skipped' } });
        continue;
      }
      yield {
        ref: c,
        endpoint: subscriber.endpoint,
        keys: { p256dh: subscriber.p256dh, auth: subscriber.auth },
        payload: template.render(createDeliveryToken(secret, c.deliveryId)),
        vapid,
        ttl: NOTIFICATION_TTL_SECONDS,
        urgency: 'normal',
        topic,
      };
    }
  }

  // While this batch works, its claims and the run's lease stay alive; if
  // this process dies, they run out and the recovery sweep takes over. A
  // batch ends within a minute or so (each push has a deadline, a paused
  // origin defers); one still running long after that is stuck, and renewing
  // its leases forever would hold the whole run with it: stop, say so, and
  // let the recovery sweep take its deliveries over.
  const startedAt = performance.now();
  const heartbeat = setInterval(() => {
    if (performance.now() - startedAt > Math.max(BATCH_STUCK_AFTER_MS, 10 * config.deliveryLeaseMs)) {
      clearInterval(heartbeat);
      deps.log.error({ runId: run.id, deliveries: claimed.length }, 'batch still running after its time; its leases are left to run out for the recovery sweep');
      return;
    }
    const until = clock.now() + config.deliveryLeaseMs;
    void renewLeases(db, run.id, claimed.map((c) => c.deliveryId), until).catch((error: unknown) => deps.log.warn({ err: error }, 'lease renewal failed'));
  }, Math.max(100, Math.floor(config.deliveryLeaseMs / 3)));
  let summary: SendAllSummary;
  try {
    summary = await pushClient.sendAll(messages(), (message, outcome) => results.record({ claimed: message.ref, outcome }));
    await results.flush();
  } finally {
    clearInterval(heartbeat);
  }
  // One line per batch at debug level: with several worker processes, it shows which one sent what.
  deps.log.debug({ runId: run.id, claimed: claimed.length, outcomes: summary.counts }, 'batch sent');
  await finishBatch(deps, run.id);
}

async function finishBatch(deps: DeliveryDeps, runId: string): Promise<void> {
  const { db, clock, config } = deps;
  await extendRunLease(db, runId, clock.now() + config.deliveryLeaseMs);
  if (!(await hasPendingDeliveries(db, runId))) await completeRunIfFinished(db, runId, clock.now());
}

/** A group is written once it holds this many results, or this long after its first one. */
const GROUP_MAX_RESULTS = 128;
const GROUP_MAX_WAIT_MS = 20;

/**
 * Writes outcomes in groups (one transaction each). The push client counts
 * every outcome as in flight until the write holding it has finished, so the
 * pushes sent but not yet recorded never exceed its concurrency: that is the
 * most a crash can re-send.
 */
class ResultWriter {
  private pending: Outcome[] = [];
  /** The write the pending results will go into, and when it starts. */
  private nextWrite: { promise: Promise<void>; start: () => void; timer: NodeJS.Timeout } | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly run: RunRow,
  ) {}

  /** Keeps an outcome for the next write (no write started). */
  add(outcome: Outcome): void {
    this.pending.push(outcome);
  }

  /** Keeps an outcome; resolves once it is recorded. */
  record(outcome: Outcome): Promise<void> {
    this.pending.push(outcome);
    const write = this.nextWrite ?? this.scheduleWrite();
    if (this.pending.length >= GROUP_MAX_RESULTS) write.start();
    return write.promise;
  }

  /** Writes everything kept so far; resolves when it is recorded. */
  flush(): Promise<void> {
    if (!this.pending.length) return this.chain;
    const write = this.nextWrite ?? this.scheduleWrite();
    write.start();
    return write.promise;
  }

  private scheduleWrite(): NonNullable<ResultWriter['nextWrite']> {
    let started = false;
    let resolveStart!: () => void;
    const go = new Promise<void>((resolve) => (resolveStart = resolve));
    const write = {
      start: () => {
        if (started) return;
        started = true;
        clearTimeout(write.timer);
        if (this.nextWrite === write) this.nextWrite = undefined;
        resolveStart();
      },
      timer: setTimeout(() => write.start(), GROUP_MAX_WAIT_MS),
      promise: Promise.resolve() as Promise<void>,
    };
    // Groups are written one after the other, in order.
    write.promise = this.chain = Promise.all([this.chain, go]).then(() => {
      const group = this.pending;
      this.pending = [];
      return recordOutcomes(this.deps, this.run, group);
    });
    this.nextWrite = write;
    return write;
  }
}

/** Writes a group of results: delivery status, subscriber state and every counter, in one transaction. */
async function recordOutcomes(deps: DeliveryDeps, run: RunRow, outcomes: Outcome[]): Promise<void> {
  if (!outcomes.length) return;
  const { clock, config, queue } = deps;
  const now = clock.now();
  const sorted: SortedOutcomes = { sent: [], failed: [], expired: [], skipped: [], retries: [] };
  // A message no push service took within its TTL is not worth sending any more.
  const outlived = (run.started_at ?? now) + NOTIFICATION_TTL_SECONDS * 1000 <= now;
  const attemptsLeft = (claimed: Claimed) => claimed.attempts < config.deliveryMaxAttempts;

  for (const { claimed, outcome } of outcomes) {
    const base = { id: claimed.deliveryId, pushService: claimed.pushService };
    switch (outcome.kind) {
      case 'sent':
        sorted.sent.push(base);
        break;
      case 'skipped':
        sorted.skipped.push(base);
        break;
      case 'gone':
        sorted.expired.push({ claimed, status: outcome.status, reason: outcome.reason });
        break;
      case 'failed':
        sorted.failed.push({ ...base, code: outcome.code, error: outcome.reason, subscriber: claimed });
        break;
      case 'retryable':
      case 'rate-limited':
      case 'deferred': {
        // A 429, and a message held back by a paused push service, count as attempts too: a push service
        // that keeps throttling fails the send as rate_limited after DELIVERY_MAX_ATTEMPTS rather than
        // holding it for a day. Only a message handed back at shutdown was not an attempt.
        const code: FailureReason | null = outcome.kind === 'rate-limited' ? 'rate_limited' : outcome.code;
        const counts = code !== null;
        if (code !== null && (outlived || !attemptsLeft(claimed))) {
          const why = outlived ? 'not accepted within the message lifetime' : `gave up after ${claimed.attempts} attempts`;
          sorted.failed.push({ ...base, code, error: `${outcome.reason} (${why})`, subscriber: claimed });
        } else if (outcome.kind === 'retryable') {
          const at = Math.max(outcome.retryAt ?? 0, now + retryDelayMs(config.deliveryRetryBaseMs, claimed.attempts));
          sorted.retries.push({ ...base, code: outcome.code, error: outcome.reason, at, counts });
        } else {
          sorted.retries.push({ ...base, code, error: outcome.reason, at: outcome.retryAt, counts });
        }
        break;
      }
    }
  }

  await retryWhileClaimsHold(deps, run.id, () => writeOutcomes(deps, run, now, sorted));

  // Retries go back on the queue with their delay; if that job is lost (or
  // Redis is unreachable now), the run's lease runs out and the recovery
  // sweep re-enqueues them.
  const byTime = new Map<number, number[]>();
  for (const retry of sorted.retries) {
    const at = Math.ceil(retry.at / 250) * 250;
    byTime.set(at, [...(byTime.get(at) ?? []), retry.id]);
  }
  try {
    for (const [at, ids] of byTime) {
      await queue.enqueue(sendBatchJob, { runId: run.id, deliveryIds: ids }, { delayMs: Math.max(0, at - now) });
    }
  } catch (error) {
    deps.log.warn({ err: error, runId: run.id }, 'could not queue delivery retries; the recovery sweep will');
  }
}

interface Recipient {
  id: number;
  pushService: PushServiceName;
}

interface SortedOutcomes {
  sent: Recipient[];
  skipped: Recipient[];
  failed: Array<Recipient & { code: FailureReason; error: string; subscriber: Claimed }>;
  expired: Array<{ claimed: Claimed; status: number; reason: string }>;
  /** `code` null: handed back at shutdown (no reason to show, not an attempt). */
  retries: Array<Recipient & { code: FailureReason | null; error: string; at: number; counts: boolean }>;
}

/**
 * How long a failed write of results is tried again, at most. The database
 * may be restarting; meanwhile this batch's claims still hold (for the
 * lease), and its unrecorded results count against the push client's
 * concurrency, so no new pushes go out. Recorded once it is back, nothing is
 * sent twice; given up, the pushes in flight are re-sent after the lease.
 */
const RECORD_RETRY_MAX_MS = 60_000;

async function retryWhileClaimsHold(deps: DeliveryDeps, runId: string, write: () => Promise<void>): Promise<void> {
  const started = performance.now();
  const giveUpAfter = Math.min(RECORD_RETRY_MAX_MS, deps.config.deliveryLeaseMs / 2);
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (performance.now() - started >= giveUpAfter) throw error;
      deps.log.warn({ err: error, runId, attempt }, 'recording push results failed; trying again');
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** (attempt - 1))));
    }
  }
}

/**
 * One transaction: delivery states, subscribers gone, every counter, the
 * notification's failure groups and the site's delivery health. Conditional
 * on `pending`, so writing it twice counts once.
 */
async function writeOutcomes(deps: DeliveryDeps, run: RunRow, now: number, sorted: SortedOutcomes): Promise<void> {
  const { db, config } = deps;
  const { sent, skipped, failed, expired, retries } = sorted;
  await db.transaction().execute(async (trx) => {
    const health: DeliveryHealthEntry[] = [];
    const failureGroups = new Map<string, { reason: FailureReason; pushService: PushServiceName; count: number; sampleError: string }>();
    const gone: Array<{ subscriberId: string; endpointHashSentTo: string }> = [];
    let sentCount = 0;
    let skippedCount = 0;
    let expiredCount = 0;

    // Accepted: one statement per push service (the Delivery section counts them by service and by time to accept).
    for (const pushService of new Set(sent.map((item) => item.pushService))) {
      const ids = sent.filter((item) => item.pushService === pushService).map((item) => item.id);
      const result = await trx
        .updateTable('deliveries')
        .set({ status: 'sent', sent_at: now, lease_until: null, next_attempt_at: null, error: null, reason: null, push_service: null })
        .where('id', 'in', ids)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      const count = Number(result.numUpdatedRows);
      sentCount += count;
      for (let i = 0; i < count; i++) health.push({ pushService, outcome: 'accepted', reason: null, latencyMs: Math.max(0, now - run.due_at) });
    }
    if (skipped.length) {
      const result = await trx
        .updateTable('deliveries')
        .set({ status: 'skipped', lease_until: null, next_attempt_at: null, error: 'The subscriber was no longer active', reason: 'inactive', push_service: null })
        .where('id', 'in', skipped.map((item) => item.id))
        .where('status', '=', 'pending')
        .executeTakeFirst();
      skippedCount += Number(result.numUpdatedRows);
    }
    for (const item of failed) {
      const result = await trx
        .updateTable('deliveries')
        .set({ status: 'failed', lease_until: null, next_attempt_at: null, error: item.error.slice(0, 500), reason: item.code, push_service: item.pushService })
        .where('id', '=', item.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (!Number(result.numUpdatedRows)) continue;
      const key = `${item.code} ${item.pushService}`;
      const group = failureGroups.get(key) ?? { reason: item.code, pushService: item.pushService, count: 0, sampleError: item.error };
      group.count += 1;
      group.sampleError = item.error;
      failureGroups.set(key, group);
      health.push({ pushService: item.pushService, outcome: 'failed', reason: item.code });
      // The push service named the subscription invalid: like a 410, it will never receive anything.
      if (item.code === 'invalid_subscription' && item.subscriber.endpointHash) {
        gone.push({ subscriberId: item.subscriber.subscriberId, endpointHashSentTo: item.subscriber.endpointHash });
      }
    }
    for (const item of expired) {
      const updated = await trx
        .updateTable('deliveries')
        .set({ status: 'gone', lease_until: null, next_attempt_at: null, error: item.reason.slice(0, 500), reason: 'gone', push_service: item.claimed.pushService })
        .where('id', '=', item.claimed.deliveryId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (!Number(updated.numUpdatedRows)) continue;
      expiredCount += 1;
      health.push({ pushService: item.claimed.pushService, outcome: 'expired', reason: 'gone' });
      // 404/410: the subscription is gone for good, unless it changed meanwhile (docs/web-push.md).
      if (item.claimed.endpointHash) gone.push({ subscriberId: item.claimed.subscriberId, endpointHashSentTo: item.claimed.endpointHash });
    }
    for (const retry of retries) {
      await trx
        .updateTable('deliveries')
        .set({
          lease_until: null,
          next_attempt_at: retry.at,
          error: retry.error.slice(0, 500),
          // The reason of the last failure stays while the delivery waits: the notification page shows it live.
          ...(retry.code ? { reason: retry.code, push_service: retry.pushService } : {}),
          ...(retry.counts ? {} : { attempts: sql<number>`attempts - 1` }),
        })
        .where('id', '=', retry.id)
        .where('status', '=', 'pending')
        .execute();
    }
    const failedCount = [...failureGroups.values()].reduce((sum, group) => sum + group.count, 0);
    // Deliveries first, then subscribers, then the counters in addToRunCounters' order.
    const unsubscribed = await deps.deliveryPorts.deactivateGoneSubscribers(trx, gone, now);
    await addToRunCounters(trx, deps.deliveryPorts.addToSiteCounters, run, now, {
      sent: sentCount,
      failed: failedCount,
      expired: expiredCount,
      skipped: skippedCount,
      unsubscribed,
    });
    await addToNotificationFailures(trx, run.notification_id, [...failureGroups.values()]);
    await deps.deliveryPorts.addToDeliveryHealth(trx, run.site_id, now, health);
    if (retries.length) {
      // The run must not look stalled while it waits for its retries.
      await extendRunLease(trx, run.id, Math.max(...retries.map((r) => r.at)) + config.deliveryLeaseMs);
    }
  });
}
