// The counters a send adds to, in the transaction of the change they count
// (docs/delivery.md, "Runs and deliveries" and "Outcomes"): the run's, the
// notification's, the site's hourly rollup (through the AddToSiteCounters
// port) and the notification's failure groups, always taken in one row order
// so two result transactions never deadlock on PostgreSQL.
import { pendingOf, type FailureReason, type OutcomeCounts, type PushServiceName } from '@herald/contracts';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, RunRow } from '../db/schema';
import type { AddToSiteCounters } from './ports';

type Db = Kysely<Database> | Transaction<Database>;

type CountedRow = Pick<RunRow, 'total_count' | 'sent_count' | 'failed_count' | 'expired_count' | 'skipped_count' | 'delivered_count' | 'clicked_count'>;

/**
 * The outcome model's counts of a notification or a run (contracts
 * delivery-outcomes.ts), from the counters kept here: what the API, the
 * report and the webhook events all show.
 */
export function outcomeCountsOf(row: CountedRow): OutcomeCounts {
  const counts = {
    targeted: row.total_count,
    sent: row.sent_count,
    failed: row.failed_count,
    expired: row.expired_count,
    skipped: row.skipped_count,
    delivered: row.delivered_count,
    clicked: row.clicked_count,
  };
  return { ...counts, pending: pendingOf(counts) };
}

export interface RunCounters {
  /** Accepted by the push service. */
  sent?: number;
  /** Will not arrive (expired and skipped are counted apart). */
  failed?: number;
  /** The push service answered 404/410. */
  expired?: number;
  /** Not sent: the subscriber was inactive by then, or at the site's frequency cap. */
  skipped?: number;
  /** Of `skipped`, those at the frequency cap (kept on the notification only). */
  capped?: number;
  delivered?: number;
  clicked?: number;
  /** Subscribers the push service said are gone or invalid, already marked inactive by the caller. */
  unsubscribed?: number;
}

/**
 * Adds to the run's, the notification's and the site's hourly counters
 * together (and, for subscribers gone, to the site's active count).
 *
 * Rows are taken in one order: notification_runs, notifications, sites,
 * stats_hourly, then notification_failures and delivery_stats_hourly (written
 * by the caller after this) — the order the subscribe path also follows
 * (sites, then stats_hourly). On PostgreSQL two transactions that took them in
 * opposite orders would deadlock; with 404/410 answers at scale they did, each
 * costing a second (deadlock_timeout) and a rolled-back batch of results.
 * Deliveries and subscribers come before all of these.
 */
export async function addToRunCounters(
  db: Db,
  addToSiteCounters: AddToSiteCounters,
  run: Pick<RunRow, 'id' | 'notification_id' | 'site_id'> & { due_at?: number },
  at: number,
  counters: RunCounters,
): Promise<void> {
  const sent = counters.sent ?? 0;
  const failed = counters.failed ?? 0;
  const expired = counters.expired ?? 0;
  const skipped = counters.skipped ?? 0;
  const capped = counters.capped ?? 0;
  const delivered = counters.delivered ?? 0;
  const clicked = counters.clicked ?? 0;
  const unsubscribed = counters.unsubscribed ?? 0;
  if (!sent && !failed && !expired && !skipped && !delivered && !clicked && !unsubscribed) return;
  // The outcome counters a run and its notification both keep, added to alike.
  const added = (column: 'sent_count' | 'failed_count' | 'expired_count' | 'skipped_count' | 'delivered_count' | 'clicked_count', amount: number) => sql<number>`${sql.ref(column)} + ${amount}`;
  const outcomeCounters = {
    sent_count: added('sent_count', sent),
    failed_count: added('failed_count', failed),
    expired_count: added('expired_count', expired),
    skipped_count: added('skipped_count', skipped),
    delivered_count: added('delivered_count', delivered),
    clicked_count: added('clicked_count', clicked),
  };
  await db.updateTable('notification_runs').set(outcomeCounters).where('id', '=', run.id).execute();
  const occurrence = run.due_at ?? at;
  await db
    .updateTable('notifications')
    .set((eb) => ({
      ...outcomeCounters,
      skipped_capped_count: eb('skipped_capped_count', '+', capped),
      // "Sent <date>" only once a push service accepted something (issue 11). A one-time notification's
      // sent_at is its first accepted push; a recurring one's its latest occurrence that got one accepted;
      // a triggered one sends once per event: its latest accepted push. The dashboard's Recent
      // Notifications (spec §2, ordered by sent_at) and the notifications list show them by it.
      ...(sent > 0
        ? {
            sent_at: sql<number>`case when type = 'TRIGGERED' then ${at} when type = 'RECURRING' then (case when sent_at is null or sent_at < ${occurrence} then ${occurrence} else sent_at end) else coalesce(sent_at, ${at}) end`,
          }
        : {}),
    }))
    .where('id', '=', run.notification_id)
    .execute();
  // Expired deliveries are not failures: the hourly "failed" counts failures only.
  await addToSiteCounters(db, run.site_id, at, { sent, failed, delivered, clicked, unsubscribed, lost_at_push_service: unsubscribed });
}

export interface FailureGroupIncrement {
  reason: FailureReason;
  pushService: PushServiceName;
  count: number;
  sampleError: string;
}

/**
 * Adds failed deliveries to their notification's groups (reason × push
 * service), in the result transaction, after addToRunCounters' rows. The
 * sample is the latest error text of the group.
 */
export async function addToNotificationFailures(db: Db, notificationId: string, groups: readonly FailureGroupIncrement[]): Promise<void> {
  for (const group of [...groups].sort((a, b) => `${a.reason} ${a.pushService}`.localeCompare(`${b.reason} ${b.pushService}`))) {
    if (group.count <= 0) continue;
    await db
      .insertInto('notification_failures')
      .values({ notification_id: notificationId, reason: group.reason, push_service: group.pushService, count: group.count, sample_error: group.sampleError.slice(0, 500) })
      .onConflict((oc) =>
        oc.columns(['notification_id', 'reason', 'push_service']).doUpdateSet((eb) => ({
          count: eb('notification_failures.count', '+', eb.ref('excluded.count')),
          sample_error: eb.ref('excluded.sample_error'),
        })),
      )
      .execute();
  }
}
