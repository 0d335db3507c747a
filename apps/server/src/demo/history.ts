// The demo's past, played back: every run whose time has come (created by the
// services, the recurring schedules, the triggers and the welcome-campaign
// enrolments) is finished the way the delivery engine finishes it, with
// outcomes drawn per subscriber — failed, sent, delivered a moment or hours
// later, clicked or not — and the counters and the hourly rollup follow from
// those outcomes, so every figure the dashboard shows adds up.
//
// The state changes mirror delivery/runs.ts and run-counters.ts: a claimed one-time notification
// turns `sending` (markNotificationSending), counters add to the run and the
// notification (addToRunCounters: sent_at only once something was accepted; a
// triggered notification's is its latest send, a recurring one's its latest
// occurrence), failed deliveries add to the notification's failure groups and
// every result to the Delivery section's hourly rows, and a run ends
// `completed`, `completed_with_errors` or `failed` (finalRunStatus), which a
// one-time notification takes over (completeRunIfFinished). A drip step of a
// subscriber who has left is cancelled (dripStepGuard).
import type { FailureReason, PushServiceName } from '@herald/contracts';
import type { Insertable, Kysely } from 'kysely';
import type { Database, DeliveriesTable, DeliveryHealthOutcome, DeliveryStatsHourlyTable, NotificationFailuresTable, NotificationRow, RunRow, StatsHourlyTable } from '../db/schema';
import { subscriberSeqsOfSite } from '../db/subscriber-seq';
import { pushServiceOf } from '../delivery/push-services';
import { finalRunStatus } from '../delivery/runs';
import { hourStart, latencyBucket } from '../features/analytics/site-counters';
import { parseStoredRules } from '../features/segments/segment-rules';
import type { DemoSubscriber } from './audience';
import type { SeededRandom } from './random';
import * as repo from './repository';

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/** How a notification's sends went. */
export interface SendModel {
  /** A stable name: with the run's place among the notification's runs it seeds the run's outcomes. */
  key: string;
  /** The share of delivered notifications that are clicked (before the device adjustment). */
  clickRate: number;
  /** Every push failed: the server could not reach the push services during this send. */
  unreachable?: boolean;
}

type HourlyCounter = 'sent' | 'delivered' | 'clicked' | 'failed' | 'subscribed' | 'unsubscribed';

class HourlyRollup {
  private readonly hours = new Map<number, Record<HourlyCounter, number>>();

  add(at: number, counter: HourlyCounter): void {
    const hour = hourStart(at);
    let row = this.hours.get(hour);
    if (!row) {
      row = { sent: 0, delivered: 0, clicked: 0, failed: 0, subscribed: 0, unsubscribed: 0 };
      this.hours.set(hour, row);
    }
    row[counter] += 1;
  }

  rows(siteId: string): Array<Insertable<StatsHourlyTable>> {
    return [...this.hours.entries()].sort(([a], [b]) => a - b).map(([hour, counters]) => ({ site_id: siteId, hour_start: hour, ...counters }));
  }
}

interface Counters {
  total: number;
  sent: number;
  delivered: number;
  clicked: number;
  failed: number;
}

/** How likely a push the service accepted reaches the device: phones are offline, asleep or cleared more often than desktops. */
function deliveryChance(subscriber: DemoSubscriber): number {
  if (subscriber.row.os === 'iOS') return 0.86;
  return subscriber.mobile ? 0.89 : 0.95;
}

/** The occasional failure of a push service that is up: each retried with backoff before giving up. */
const RETRYABLE_FAILURES: Array<{ error: string; code: FailureReason }> = [
  { error: '503 (gave up after 5 attempts)', code: 'server_error' },
  { error: 'connection: ECONNRESET (gave up after 5 attempts)', code: 'unreachable' },
  { error: 'timeout: no answer within 15000 ms (gave up after 5 attempts)', code: 'timeout' },
];

/** The Delivery section's hourly rows, added up by key as addToDeliveryHealth does. */
class DeliveryHealthRollup {
  private readonly rows = new Map<string, Insertable<DeliveryStatsHourlyTable>>();

  add(siteId: string, at: number, pushService: PushServiceName, outcome: DeliveryHealthOutcome, reason: FailureReason | '', latencyMs?: number): void {
    const bucket = outcome === 'accepted' ? latencyBucket(latencyMs ?? 0) : 0;
    const hour = hourStart(at);
    const key = `${hour} ${pushService} ${outcome} ${reason} ${bucket}`;
    const row = this.rows.get(key) ?? { site_id: siteId, hour_start: hour, push_service: pushService, outcome, reason, latency_bucket: bucket, count: 0 };
    row.count = (row.count ?? 0) + 1;
    this.rows.set(key, row);
  }

  all(): Array<Insertable<DeliveryStatsHourlyTable>> {
    return [...this.rows.values()];
  }
}

/** Per notification, reason and push service: how many failed and the latest error text (notification_failures). */
class FailureGroups {
  private readonly groups = new Map<string, Insertable<NotificationFailuresTable>>();

  add(notificationId: string, reason: FailureReason, pushService: PushServiceName, error: string): void {
    const key = `${notificationId} ${reason} ${pushService}`;
    const group = this.groups.get(key) ?? { notification_id: notificationId, reason, push_service: pushService, count: 0, sample_error: error };
    group.count = (group.count ?? 0) + 1;
    group.sample_error = error;
    this.groups.set(key, group);
  }

  all(): Array<Insertable<NotificationFailuresTable>> {
    return [...this.groups.values()];
  }
}

interface Recorders {
  rollup: HourlyRollup;
  health: DeliveryHealthRollup;
  failures: FailureGroups;
  /** Each subscriber's latest delivered beacon. */
  lastDelivered: Map<string, number>;
}

interface RunOutcome {
  deliveries: Array<Insertable<DeliveriesTable>>;
  counters: Counters;
  finishedAt: number;
  firstSentAt: number | null;
  lastSentAt: number | null;
}

/** One push per audience member, sent at about 800 a second from the claim on. */
function playRun(
  run: RunRow,
  claimedAt: number,
  audience: string[],
  subscribers: Map<string, DemoSubscriber & { seq: number }>,
  model: SendModel,
  random: SeededRandom,
  now: number,
  recorders: Recorders,
): RunOutcome {
  const { rollup, health, failures, lastDelivered } = recorders;
  const counters: Counters = { total: audience.length, sent: 0, delivered: 0, clicked: 0, failed: 0 };
  const deliveries: Array<Insertable<DeliveriesTable>> = [];
  let finishedAt = claimedAt;
  let firstSentAt: number | null = null;
  let lastSentAt: number | null = null;
  audience.forEach((subscriberId, index) => {
    const subscriber = subscribers.get(subscriberId)!;
    const pushService = pushServiceOf(subscriber.row.endpoint);
    const attemptAt = claimedAt + 300 + Math.round(index * 1.25) + random.int(0, 400);
    const base = { run_seq: run.seq, subscriber_seq: subscriber.seq, next_attempt_at: null, lease_until: null, created_at: claimedAt };

    if (model.unreachable || random.chance(0.004)) {
      // Retried with backoff (2 s, 4 s, 8 s, 16 s) before giving up.
      const failedAt = attemptAt + 30 * SECOND_MS + random.int(0, 5000);
      const failure = model.unreachable
        ? { error: `connection: getaddrinfo EAI_AGAIN ${subscriber.pushHost} (gave up after 5 attempts)`, code: 'unreachable' as const }
        : random.pick(RETRYABLE_FAILURES);
      deliveries.push({ ...base, status: 'failed', attempts: 5, error: failure.error, reason: failure.code, push_service: pushService, sent_at: null, delivered_at: null, clicked_at: null });
      counters.failed += 1;
      rollup.add(failedAt, 'failed');
      health.add(run.site_id, failedAt, pushService, 'failed', failure.code);
      failures.add(run.notification_id, failure.code, pushService, failure.error);
      finishedAt = Math.max(finishedAt, failedAt);
      return;
    }

    const sentAt = attemptAt;
    counters.sent += 1;
    rollup.add(sentAt, 'sent');
    health.add(run.site_id, sentAt, pushService, 'accepted', '', sentAt - run.due_at);
    firstSentAt = Math.min(firstSentAt ?? sentAt, sentAt);
    finishedAt = Math.max(finishedAt, sentAt);
    lastSentAt = Math.max(lastSentAt ?? 0, sentAt);

    let deliveredAt: number | null = null;
    if (random.chance(deliveryChance(subscriber))) {
      // Most devices are online; some get the push when they wake up, hours later.
      const roll = random.next();
      const delay = roll < 0.75 ? random.int(300, 4000) : roll < 0.93 ? random.exponential(10 * MINUTE_MS) : random.between(HOUR_MS, 14 * HOUR_MS);
      const at = Math.round(sentAt + delay);
      if (at <= now) deliveredAt = at;
    }
    let clickedAt: number | null = null;
    if (deliveredAt !== null && random.chance(Math.min(0.95, model.clickRate * (subscriber.mobile ? 1.15 : 0.9)))) {
      const delay = random.chance(0.85) ? random.exponential(20 * MINUTE_MS) : random.between(HOUR_MS, 24 * HOUR_MS);
      const at = Math.round(deliveredAt + 2 * SECOND_MS + delay);
      if (at <= now) clickedAt = at;
    }
    if (deliveredAt !== null) {
      counters.delivered += 1;
      rollup.add(deliveredAt, 'delivered');
      lastDelivered.set(subscriberId, Math.max(lastDelivered.get(subscriberId) ?? 0, deliveredAt));
    }
    if (clickedAt !== null) {
      counters.clicked += 1;
      rollup.add(clickedAt, 'clicked');
    }
    deliveries.push({ ...base, status: 'sent', attempts: 1, error: null, reason: null, push_service: null, sent_at: sentAt, delivered_at: deliveredAt, clicked_at: clickedAt });
  });
  return { deliveries, counters, finishedAt, firstSentAt, lastSentAt };
}

/** "12 of 40 not accepted: 12 unreachable (fcm)", as completeRunIfFinished words it. */
function failureSummary(deliveries: ReadonlyArray<Insertable<DeliveriesTable>>, targeted: number): string | null {
  const groups = new Map<string, number>();
  for (const delivery of deliveries) {
    if (delivery.status !== 'failed') continue;
    const key = `${delivery.reason} (${delivery.push_service})`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  if (!groups.size) return null;
  const sorted = [...groups.entries()].sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  return `${total} of ${targeted} not accepted: ${sorted.map(([key, count]) => `${count} ${key}`).join(', ')}`;
}

interface HistoryInput {
  siteId: string;
  now: number;
  subscribers: Map<string, DemoSubscriber>;
  /** How each notification's sends go, by notification id. */
  models: Map<string, SendModel>;
  random: SeededRandom;
}

/** Finishes every due run of the site and writes the counters and the hourly rollup (subscriptions included), in one transaction. */
export async function playHistory(db: Kysely<Database>, input: HistoryInput): Promise<void> {
  const { siteId, now, subscribers, models } = input;
  const rollup = new HourlyRollup();
  const recorders: Recorders = { rollup, health: new DeliveryHealthRollup(), failures: new FailureGroups(), lastDelivered: new Map() };
  for (const { row } of subscribers.values()) {
    rollup.add(row.subscribed_at, 'subscribed');
    if (row.unsubscribed_at !== null) rollup.add(row.unsubscribed_at, 'unsubscribed');
  }

  const runs = await repo.dueRuns(db, siteId, now);
  const seqOf = await subscriberSeqsOfSite(db, siteId);
  const numbered = new Map([...subscribers].map(([id, subscriber]) => [id, { ...subscriber, seq: seqOf.get(id)! }]));
  const notifications = new Map((await repo.notificationsOfSite(db, siteId)).map((row) => [row.id, { ...row }]));
  const segmentRules = await repo.segmentRulesOfSite(db, siteId);
  const runsSoFar = new Map<string, number>();
  const deliveries: Array<Insertable<DeliveriesTable>> = [];
  const runChanges: Array<{ id: string; changes: Parameters<typeof repo.updateRun>[2] }> = [];

  for (const run of runs) {
    const notification = notifications.get(run.notification_id)!;
    const model = models.get(notification.id) ?? { key: notification.title, clickRate: 0.08 };
    const ordinal = runsSoFar.get(notification.id) ?? 0;
    runsSoFar.set(notification.id, ordinal + 1);
    const random = input.random.fork(`${model.key}#${ordinal}#${run.subscriber_id ?? ''}`);
    // The scheduler ticks every second: a run is claimed within a second of being due.
    const claimedAt = run.due_at + random.int(200, 1200);

    const subscriber = run.subscriber_id ? subscribers.get(run.subscriber_id) : undefined;
    const leftBeforeDue = subscriber !== undefined && subscriber.row.unsubscribed_at !== null && subscriber.row.unsubscribed_at <= run.due_at;
    if (run.dedupe_key.startsWith('drip:') && leftBeforeDue) {
      runChanges.push({ id: run.id, changes: { status: 'cancelled', finished_at: claimedAt, last_error: 'Subscriber unsubscribed' } });
      continue;
    }

    const storedRules = run.segment_id ? segmentRules.get(run.segment_id) : undefined;
    const rules = storedRules === undefined ? undefined : parseStoredRules(storedRules);
    const audience =
      subscriber && !rules
        ? activeAt(subscriber, claimedAt)
          ? [subscriber.row.id]
          : []
        : await repo.audienceAt(db, siteId, claimedAt, rules, run.subscriber_id);

    if (notification.type === 'ONE_TIME' && ['draft', 'scheduled', 'failed', 'completed_with_errors'].includes(notification.status)) {
      notification.status = 'sending';
      notification.updated_at = claimedAt;
    }
    const outcome = playRun(run, claimedAt, audience, numbered, model, random, now, recorders);
    deliveries.push(...outcome.deliveries);
    notification.total_count += outcome.counters.total;
    notification.sent_count += outcome.counters.sent;
    notification.delivered_count += outcome.counters.delivered;
    notification.clicked_count += outcome.counters.clicked;
    notification.failed_count += outcome.counters.failed;
    if (outcome.firstSentAt !== null) {
      if (notification.type === 'TRIGGERED') notification.sent_at = outcome.lastSentAt;
      else if (notification.type === 'RECURRING') notification.sent_at = Math.max(notification.sent_at ?? 0, run.due_at);
      else notification.sent_at ??= outcome.firstSentAt;
    }

    const status = finalRunStatus({ sent_count: outcome.counters.sent, failed_count: outcome.counters.failed, expired_count: 0 });
    const lastError = status === 'completed' ? run.last_error : failureSummary(outcome.deliveries, outcome.counters.total);
    runChanges.push({
      id: run.id,
      changes: {
        status,
        started_at: claimedAt,
        finished_at: outcome.finishedAt,
        fanout_done: 1,
        fanout_cursor: audience[audience.length - 1] ?? null,
        lease_owner: null,
        lease_until: null,
        last_error: lastError,
        total_count: outcome.counters.total,
        sent_count: outcome.counters.sent,
        delivered_count: outcome.counters.delivered,
        clicked_count: outcome.counters.clicked,
        failed_count: outcome.counters.failed,
      },
    });
    if (notification.type === 'ONE_TIME' && notification.status === 'sending') {
      notification.status = status;
      notification.completed_at = outcome.finishedAt;
      notification.last_error = lastError;
      notification.updated_at = outcome.finishedAt;
    }
  }

  await db.transaction().execute(async (trx) => {
    await repo.insertDeliveries(trx, deliveries);
    for (const { id, changes } of runChanges) await repo.updateRun(trx, id, changes);
    for (const notification of notifications.values()) {
      if (!runsSoFar.has(notification.id)) continue;
      await repo.updateNotification(trx, notification.id, notificationState(notification));
    }
    await repo.addHourlyStats(trx, rollup.rows(siteId));
    await repo.insertNotificationFailures(trx, recorders.failures.all());
    await repo.insertDeliveryStats(trx, recorders.health.all());
    await repo.setLastDelivered(trx, recorders.lastDelivered);
  });
}

function activeAt(subscriber: DemoSubscriber, at: number): boolean {
  const { subscribed_at: subscribedAt, unsubscribed_at: unsubscribedAt } = subscriber.row;
  return subscribedAt <= at && (unsubscribedAt === null || unsubscribedAt > at);
}

function notificationState(row: NotificationRow) {
  return {
    status: row.status,
    sent_at: row.sent_at,
    completed_at: row.completed_at,
    last_error: row.last_error,
    total_count: row.total_count,
    sent_count: row.sent_count,
    delivered_count: row.delivered_count,
    clicked_count: row.clicked_count,
    failed_count: row.failed_count,
    updated_at: row.updated_at,
  };
}
