// What a notification's report reads: its runs, failure groups, deliveries
// waiting for a retry (the performance page) and the pages of deliveries the
// CSV report walks.
import type { FailureReason, PushServiceName } from '@herald/contracts';
import { sql, type Kysely, type Transaction } from 'kysely';
import { runSeqOf } from '../../db/run-seq';
import type { Database, RunRow } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export function listRunsOfNotification(db: Db, notificationId: string, limit = 50): Promise<RunRow[]> {
  return db
    .selectFrom('notification_runs')
    .selectAll()
    .where('notification_id', '=', notificationId)
    .where('status', '!=', 'cancelled')
    .orderBy('due_at', 'desc')
    .limit(limit)
    .execute();
}

/** A notification's failure groups, most first (notification_failures, kept in the result transactions). */
export function failuresOfNotification(db: Db, notificationId: string) {
  return db
    .selectFrom('notification_failures')
    .select(['reason', 'push_service', 'count', 'sample_error'])
    .where('notification_id', '=', notificationId)
    .where('count', '>', 0)
    .orderBy('count', 'desc')
    .orderBy('reason')
    .orderBy('push_service')
    .execute();
}

export interface RetryingGroup {
  reason: FailureReason;
  push_service: PushServiceName;
  count: number;
  attempt: number;
  next_attempt_at: number | null;
  sample_error: string | null;
}

/**
 * Deliveries of the notification's runs in progress that wait for another
 * attempt, by reason and push service: read through the partial index on
 * pending deliveries, so it costs what is still pending, never the send.
 */
export async function retryingOfNotification(db: Db, notificationId: string): Promise<RetryingGroup[]> {
  const sending = db.selectFrom('notification_runs').select('seq').where('notification_id', '=', notificationId).where('status', '=', 'sending');
  const rows = await db
    .selectFrom('deliveries')
    .select([
      'reason',
      'push_service',
      (eb) => eb.fn.countAll<number>().as('n'),
      (eb) => eb.fn.max('attempts').as('attempt'),
      (eb) => eb.fn.min('next_attempt_at').as('next_attempt_at'),
      (eb) => eb.fn.max('error').as('sample_error'),
    ])
    .where('run_seq', 'in', sending)
    .where('status', '=', sql<'pending'>`'pending'`)
    .where('reason', 'is not', null)
    .groupBy(['reason', 'push_service'])
    .execute();
  return rows
    .filter((row) => row.reason !== 'inactive')
    .map((row) => ({
      reason: row.reason as FailureReason,
      push_service: row.push_service ?? 'other',
      count: Number(row.n),
      attempt: Number(row.attempt ?? 0),
      next_attempt_at: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
      sample_error: row.sample_error ?? null,
    }))
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}

/** The runs of a notification after `afterId` in id order, a page at a time (the CSV report walks all of them). */
export function runsOfNotificationPage(db: Db, notificationId: string, afterId: string | null, limit: number) {
  let query = db.selectFrom('notification_runs').select(['id', 'due_at']).where('notification_id', '=', notificationId);
  if (afterId !== null) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit).execute();
}

/**
 * One page of a run's deliveries with their subscriber's id and description,
 * in the order of the subscribers' numbers after `afterSubscriberSeq` (keyset
 * over the unique (run_seq, subscriber_seq) index: memory stays flat however
 * large the send).
 */
export function reportDeliveriesPage(db: Db, runId: string, afterSubscriberSeq: number | null, limit: number) {
  let query = db
    .selectFrom('deliveries')
    .leftJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq')
    .select([
      'deliveries.subscriber_seq',
      'subscribers.id as subscriber_id',
      'deliveries.status',
      'deliveries.reason',
      'deliveries.push_service',
      'deliveries.error',
      'deliveries.attempts',
      'deliveries.next_attempt_at',
      'deliveries.sent_at',
      'deliveries.delivered_at',
      'deliveries.clicked_at',
      'subscribers.endpoint',
      'subscribers.browser',
      'subscribers.os',
      'subscribers.country',
    ])
    .where('deliveries.run_seq', '=', runSeqOf(runId));
  if (afterSubscriberSeq !== null) query = query.where('deliveries.subscriber_seq', '>', afterSubscriberSeq);
  return query.orderBy('deliveries.subscriber_seq').limit(limit).execute();
}
