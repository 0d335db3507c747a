// The send-batch job: claims a batch of a run's deliveries (so no other
// worker sends them meanwhile), renders each subscriber's payload from one
// template, hands them to the push client and records the outcomes in groups
// (record-outcomes.ts) while the push client holds their slots; retries go
// back on the queue (docs/delivery.md, "Sending, retries and back-pressure").
import type { FailureReason } from '@herald/contracts';
import { z } from 'zod';
import type { NotificationRow, RunRow, SiteRow } from '../db/schema';
import { defineJob } from '../jobs/queue';
import { abVariantsOfBatch, abVariantTemplates } from './ab-split';
import { createDeliveryToken } from './delivery-token';
import type { DeliveryDeps } from './engine-deps';
import { notificationContent, notificationTopic, siteVapidCredentials, subscriberVapidCredentials } from './notification-content';
import { createPayloadTemplate, PushPayloadTooLargeError } from './payload';
import type { SendAllSummary } from './push-client-options';
import type { PushMessage } from './push-message';
import { pushServiceOf } from './push-services';
import { retryWhileClaimsHold, sortOutcomes, writeOutcomes, type ClaimedDelivery, type DeliveryOutcome } from './record-outcomes';
import { claimDeliveries, completeRunIfFinished, extendRunLease, hasPendingDeliveries, loadRunForSending, loadSubscribersForSending, recentPushesOf, renewLeases } from './runs';

export const sendBatchJob = defineJob(
  'send-batch',
  z.object({ runId: z.string(), deliveryIds: z.array(z.number().int().positive()).min(1).max(1000) }),
);

/** A batch still running after this long (or ten leases, if longer) is taken to be stuck. */
const BATCH_STUCK_AFTER_MS = 5 * 60_000;

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

  // A throttled send's deliveries go only in the minute they were granted (docs/delivery.md, "Throttled sends").
  const claimedRows = await claimDeliveries(db, payload.deliveryIds, clock.now(), config.deliveryLeaseMs, { throttled: notification.throttle_per_minute !== null });
  if (!claimedRows.length) return;
  const subscribers = new Map((await loadSubscribersForSending(db, claimedRows.map((c) => c.subscriber_seq))).map((s) => [s.seq, s]));
  const variantOf = new Map(claimedRows.map((row) => [row.id, row.variant_index]));
  const claimed: ClaimedDelivery[] = claimedRows.map((row) => {
    const subscriber = subscribers.get(row.subscriber_seq);
    return {
      deliveryId: row.id,
      subscriberSeq: row.subscriber_seq,
      sentTo: subscriber ? { subscriberId: subscriber.id, endpointHash: subscriber.endpoint_hash } : null,
      pushService: subscriber ? pushServiceOf(subscriber.endpoint) : 'other',
      attempts: row.attempts,
    };
  });

  const variants = await abVariantsOfBatch(db, notification.id, claimedRows);
  const results = new ResultWriter(deps, run, notification.ttl_seconds);
  let template: ReturnType<typeof createPayloadTemplate>;
  let variantTemplates: Map<number, ReturnType<typeof createPayloadTemplate>>;
  let vapidOf: ReturnType<typeof subscriberVapidCredentials>;
  try {
    template = createPayloadTemplate(notificationContent(notification, site), config.publicUrl);
    // A/B sends: one template per variant the batch carries (docs/delivery.md, "A/B tests").
    variantTemplates = abVariantTemplates(variants, notification, site, config.publicUrl);
    // Each push is signed with the key its subscriber subscribed with.
    vapidOf = subscriberVapidCredentials(siteVapidCredentials(site, ownerEmail, config.vapidSubject));
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
  const atCap = await subscribersAtFrequencyCap(db, run.id, site, notification, claimed, clock.now());
  function* messages(): Generator<PushMessage<ClaimedDelivery>> {
    for (const c of claimed) {
      const subscriber = subscribers.get(c.subscriberSeq);
      if (!subscriber || !subscriber.is_active) {
        // Unsubscribed (or removed) between fan-out and sending: nothing is pushed; skipped, cause "inactive".
        results.add({ claimed: c, outcome: { kind: 'skipped', cause: 'inactive' } });
        continue;
      }
      if (atCap.has(c.subscriberSeq)) {
        results.add({ claimed: c, outcome: { kind: 'skipped', cause: 'frequency_cap' } });
        continue;
      }
      yield {
        ref: c,
        endpoint: subscriber.endpoint,
        keys: { p256dh: subscriber.p256dh, auth: subscriber.auth },
        payload: (variantTemplates.get(variantOf.get(c.deliveryId) ?? -1) ?? template).render(createDeliveryToken(secret, c.deliveryId)),
        vapid: vapidOf(subscriber),
        // The notification's own options (docs/web-push.md, "TTL, Urgency and Topic").
        ttl: notification.ttl_seconds,
        urgency: notification.urgency,
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

/**
 * The subscribers of this batch who may not get it: the site caps pushes
 * per subscriber (docs/delivery.md, "Frequency cap") and the notification is
 * not exempt. A subscriber's count is their pushes accepted within the
 * window, plus their deliveries of other sends still pending that were
 * created before this one (those go first): two sends racing to one
 * subscriber never both pass the cap.
 */
async function subscribersAtFrequencyCap(
  db: DeliveryDeps['db'],
  runId: string,
  site: Pick<SiteRow, 'frequency_cap_max' | 'frequency_cap_hours'>,
  notification: Pick<NotificationRow, 'frequency_cap_exempt'>,
  claimed: readonly ClaimedDelivery[],
  now: number,
): Promise<Set<number>> {
  const max = site.frequency_cap_max;
  const hours = site.frequency_cap_hours;
  if (max === null || hours === null || notification.frequency_cap_exempt === 1 || !claimed.length) return new Set();
  const deliveryOf = new Map(claimed.map((c) => [c.subscriberSeq, c.deliveryId]));
  const recent = await recentPushesOf(db, [...deliveryOf.keys()], runId, now - hours * 3_600_000);
  const counts = new Map<number, number>();
  for (const push of recent) {
    // A pending delivery counts only if it is ahead of this one in line.
    if (push.pending && push.deliveryId > deliveryOf.get(push.subscriberSeq)!) continue;
    counts.set(push.subscriberSeq, (counts.get(push.subscriberSeq) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, count]) => count >= max).map(([subscriberSeq]) => subscriberSeq));
}

async function finishBatch(deps: DeliveryDeps, runId: string): Promise<void> {
  const { db, clock, config } = deps;
  await extendRunLease(db, runId, clock.now() + config.deliveryLeaseMs);
  if (!(await hasPendingDeliveries(db, runId))) await completeRunIfFinished(db, deps.dbKind, runId, clock.now(), deps.deliveryPorts.runFinished);
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
  private pending: DeliveryOutcome[] = [];
  /** The write the pending results will go into, and when it starts. */
  private nextWrite: { promise: Promise<void>; start: () => void; timer: NodeJS.Timeout } | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly run: RunRow,
    private readonly ttlSeconds: number,
  ) {}

  /** Keeps an outcome for the next write (no write started). */
  add(outcome: DeliveryOutcome): void {
    this.pending.push(outcome);
  }

  /** Keeps an outcome; resolves once it is recorded. */
  record(outcome: DeliveryOutcome): Promise<void> {
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
      return recordOutcomes(this.deps, this.run, this.ttlSeconds, group);
    });
    this.nextWrite = write;
    return write;
  }
}

/** Records a group of results (record-outcomes.ts), then queues its retries. */
async function recordOutcomes(deps: DeliveryDeps, run: RunRow, ttlSeconds: number, outcomes: DeliveryOutcome[]): Promise<void> {
  if (!outcomes.length) return;
  const { clock, config, queue } = deps;
  const now = clock.now();
  const sorted = sortOutcomes(outcomes, run, now, config, ttlSeconds);

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
