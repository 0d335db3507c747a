// What a batch's push outcomes do to its deliveries (docs/delivery.md,
// "Outcomes" and "Sending, retries and back-pressure"): each one is sorted
// into sent, failed, expired, skipped or retried (with backoff, within the
// message's TTL and DELIVERY_MAX_ATTEMPTS), and a group of them is written in
// one transaction together with every counter it changes. send-batch.ts
// claims the deliveries, sends them and queues the retries.
import type { FailureReason, PushServiceName, SkipCause } from '@herald/contracts';
import { sql } from 'kysely';
import type { RunRow } from '../db/schema';
import { inKeyOrder } from '../db/lock-order';
import type { DeliveryDeps } from './engine-deps';
import type { PushOutcome } from './push-outcome';
import type { DeliveryHealthEntry } from './ports';
import { addToNotificationFailures, addToRunCounters } from './run-counters';
import { extendRunLease } from './runs';

/** A delivery a batch claimed, with what recording its outcome needs. */
export interface ClaimedDelivery {
  deliveryId: number;
  /** Its subscriber's number, as the delivery row names it (migration 0036). */
  subscriberSeq: number;
  /**
   * The subscriber and the endpoint sent to (a subscriber that re-subscribed
   * since is not deactivated); null: the subscriber is gone.
   */
  sentTo: { subscriberId: string; endpointHash: string } | null;
  pushService: PushServiceName;
  attempts: number;
}

/**
 * A push client outcome, or a delivery skipped before it reached the client:
 * its subscriber left meanwhile, or had had the site's frequency cap of pushes.
 */
export type DeliveryOutcome = { claimed: ClaimedDelivery; outcome: PushOutcome | { kind: 'skipped'; cause: SkipCause } };

/** What a skipped delivery says, by cause (the notification report shows it). */
const SKIP_ERRORS: Record<SkipCause, string> = {
  inactive: 'The subscriber was no longer active',
  frequency_cap: "The subscriber had already had the site's frequency cap of pushes",
};

/** Capped, jittered exponential backoff (docs/delivery.md). */
export function retryDelayMs(baseMs: number, attempts: number, random = Math.random): number {
  const capped = Math.min(baseMs * 2 ** Math.max(0, attempts - 1), 5 * 60_000);
  return Math.round(capped * (0.8 + 0.4 * random()));
}

/** Sorts a group of outcomes by what is written for them; retries get their time, the hopeless fail. */
export function sortOutcomes(outcomes: readonly DeliveryOutcome[], run: RunRow, now: number, config: DeliveryDeps['config'], ttlSeconds: number): SortedOutcomes {
  const sorted: SortedOutcomes = { sent: [], failed: [], expired: [], skipped: [], retries: [] };
  // A message no push service took within the notification's TTL is not worth
  // sending any more (a TTL of 0: now or never, so no retry). A manual Retry
  // sends the message again with its whole lifetime (RFC 8030 §5.2): counted from it.
  const lifetimeEnds = (run.retried_at ?? run.started_at ?? now) + ttlSeconds * 1000;
  const outlived = lifetimeEnds <= now;
  const attemptsLeft = (claimed: ClaimedDelivery) => claimed.attempts < config.deliveryMaxAttempts;

  for (const { claimed, outcome } of outcomes) {
    const base = { id: claimed.deliveryId, pushService: claimed.pushService };
    switch (outcome.kind) {
      case 'sent':
        sorted.sent.push(base);
        break;
      case 'skipped':
        sorted.skipped.push({ ...base, cause: outcome.cause });
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
        const at = outcome.kind === 'retryable' ? Math.max(outcome.retryAt ?? 0, now + retryDelayMs(config.deliveryRetryBaseMs, claimed.attempts)) : outcome.retryAt;
        // A retry that could only go out once the lifetime is over is not made: the push would arrive stale.
        const pastLifetime = outlived || at >= lifetimeEnds;
        if (code !== null && (pastLifetime || !attemptsLeft(claimed))) {
          const why = pastLifetime ? 'not accepted within the message lifetime' : `gave up after ${claimed.attempts} attempts`;
          sorted.failed.push({ ...base, code, error: `${outcome.reason} (${why})`, subscriber: claimed });
        } else {
          sorted.retries.push({ ...base, code: outcome.kind === 'retryable' ? outcome.code : code, error: outcome.reason, at, counts });
        }
        break;
      }
    }
  }
  return sorted;
}

interface Recipient {
  id: number;
  pushService: PushServiceName;
}

export interface SortedOutcomes {
  sent: Recipient[];
  skipped: Array<Recipient & { cause: SkipCause }>;
  failed: Array<Recipient & { code: FailureReason; error: string; subscriber: ClaimedDelivery }>;
  expired: Array<{ claimed: ClaimedDelivery; status: number; reason: string }>;
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

/** Runs a write of results, trying it again (100 ms doubling to 2 s) until RECORD_RETRY_MAX_MS or half the lease has passed. */
export async function retryWhileClaimsHold(deps: DeliveryDeps, runId: string, write: () => Promise<void>): Promise<void> {
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
export async function writeOutcomes(deps: Pick<DeliveryDeps, 'db' | 'dbKind' | 'config' | 'deliveryPorts'>, run: RunRow, now: number, sorted: SortedOutcomes): Promise<void> {
  const { db, config } = deps;
  const { sent, skipped, failed, expired, retries } = sorted;
  await db.transaction().execute(async (trx) => {
    if (deps.dbKind === 'postgres') {
      // The statements below take their rows by push service and outcome, not in id order; a batch of
      // beacons locks deliveries in id order (tracking/repository.ts). Locking this group's rows in id
      // order first keeps the two from waiting on each other crosswise (lock-order.ts).
      const ids = [...sent, ...skipped, ...failed, ...retries].map((item) => item.id).concat(expired.map((item) => item.claimed.deliveryId));
      if (ids.length) await trx.selectFrom('deliveries').select('id').where('id', 'in', ids).orderBy('id').forNoKeyUpdate().execute();
    }
    const health: DeliveryHealthEntry[] = [];
    const failureGroups = new Map<string, { reason: FailureReason; pushService: PushServiceName; count: number; sampleError: string }>();
    const gone: Array<{ subscriberId: string; endpointHashSentTo: string; subscriberSeq: number }> = [];
    let sentCount = 0;
    let skippedCount = 0;
    let cappedCount = 0;
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
    for (const cause of new Set(skipped.map((item) => item.cause))) {
      const result = await trx
        .updateTable('deliveries')
        .set({ status: 'skipped', lease_until: null, next_attempt_at: null, error: SKIP_ERRORS[cause], reason: cause, push_service: null })
        .where('id', 'in', skipped.filter((item) => item.cause === cause).map((item) => item.id))
        .where('status', '=', 'pending')
        .executeTakeFirst();
      skippedCount += Number(result.numUpdatedRows);
      if (cause === 'frequency_cap') cappedCount += Number(result.numUpdatedRows);
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
      const sentTo = item.subscriber.sentTo;
      if (item.code === 'invalid_subscription' && sentTo) gone.push({ subscriberId: sentTo.subscriberId, endpointHashSentTo: sentTo.endpointHash, subscriberSeq: item.subscriber.subscriberSeq });
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
      const sentTo = item.claimed.sentTo;
      if (sentTo) gone.push({ subscriberId: sentTo.subscriberId, endpointHashSentTo: sentTo.endpointHash, subscriberSeq: item.claimed.subscriberSeq });
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
    // Deliveries first, then subscribers (by number, as a batch of beacons locks them: lock-order.ts), then the
    // counters in addToRunCounters' order.
    const unsubscribed = await deps.deliveryPorts.deactivateGoneSubscribers(
      trx,
      inKeyOrder(gone, (subscriber) => [subscriber.subscriberSeq]),
      now,
    );
    await addToRunCounters(trx, deps.deliveryPorts.addToSiteCounters, run, now, {
      sent: sentCount,
      failed: failedCount,
      expired: expiredCount,
      skipped: skippedCount,
      capped: cappedCount,
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
