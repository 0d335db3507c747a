import { NOTIFICATION_STATUSES, type FailureReason, type PushServiceName } from '@herald/contracts';
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import { membershipsOf } from '../../db/membership';
import type {
  Database,
  NotificationRow,
  NotificationStatus,
  NotificationTriggerRow,
  NotificationTriggersTable,
  NotificationType,
  NotificationsTable,
  RecurringScheduleRow,
  RecurringSchedulesTable,
  RunRow,
} from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;

/** A notification if it belongs to one of the user's sites (else undefined: the caller answers 404). */
export function findNotificationOfUser(db: Db, userId: string, notificationId: string): Promise<(NotificationRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('notifications')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'notifications.site_id')
    .selectAll('notifications')
    .select('membership.role as member_role')
    .where('notifications.id', '=', notificationId)
    .executeTakeFirst();
}

export function findNotification(db: Db, notificationId: string): Promise<NotificationRow | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', notificationId).executeTakeFirst();
}

/** The site's notifications for the list page; drip-campaign steps live with their campaign, not here. */
export function listNotifications(db: Db, siteId: string, filter: { status?: NotificationStatus[]; type?: NotificationType }): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll().where('site_id', '=', siteId).where('source', '!=', 'campaign');
  if (filter.status?.length) query = query.where('status', 'in', filter.status);
  if (filter.type) query = query.where('type', '=', filter.type);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(500).execute();
}

export async function countNotificationsByStatus(db: Db, siteId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('notifications')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('site_id', '=', siteId)
    .where('source', '!=', 'campaign')
    .groupBy('status')
    .execute();
  // Every status has an entry (0 when none), and `all` is their sum: the list's filters add up.
  const counts: Record<string, number> = Object.fromEntries(NOTIFICATION_STATUSES.map((status) => [status, 0]));
  let all = 0;
  for (const row of rows) {
    counts[row.status] = Number(row.n);
    all += Number(row.n);
  }
  return { ...counts, all };
}

export async function insertNotification(db: Db, row: Insertable<NotificationsTable>): Promise<void> {
  await db.insertInto('notifications').values(row).execute();
}

export async function updateNotification(db: Db, id: string, changes: Updateable<NotificationsTable>): Promise<void> {
  await db.updateTable('notifications').set(changes).where('id', '=', id).execute();
}

export async function deleteNotification(db: Db, id: string): Promise<void> {
  await db.deleteFrom('notifications').where('id', '=', id).execute();
}

/** Changes the pending run of a notification (due time, audience); false if it is no longer pending (already sending). */
export async function updatePendingRun(db: Db, dedupeKey: string, changes: { due_at: number; segment_id: string | null }): Promise<boolean> {
  const result = await db
    .updateTable('notification_runs')
    .set(changes)
    .where('dedupe_key', '=', dedupeKey)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Cancels a pending run; false if it already started. */
export async function cancelPendingRun(db: Db, dedupeKey: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('notification_runs')
    .set({ status: 'cancelled', finished_at: now })
    .where('dedupe_key', '=', dedupeKey)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deletePendingRun(db: Db, dedupeKey: string): Promise<boolean> {
  const result = await db.deleteFrom('notification_runs').where('dedupe_key', '=', dedupeKey).where('status', '=', 'pending').executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export function latestRunOfNotification(db: Db, notificationId: string): Promise<RunRow | undefined> {
  return db.selectFrom('notification_runs').selectAll().where('notification_id', '=', notificationId).orderBy('created_at', 'desc').orderBy('id').limit(1).executeTakeFirst();
}

export function findRunByKey(db: Db, dedupeKey: string): Promise<RunRow | undefined> {
  return db.selectFrom('notification_runs').selectAll().where('dedupe_key', '=', dedupeKey).executeTakeFirst();
}

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

/**
 * Puts a finished run's failed deliveries back to pending and the run back to
 * sending with an expired lease: the scheduler's recovery sweep re-enqueues them.
 * Subscriptions that are gone stay gone. The failure groups lose what is
 * tried again, so the report counts each delivery once.
 */
export async function reopenFailedRun(db: Db, run: RunRow, now: number): Promise<number> {
  const groups = await db
    .selectFrom('deliveries')
    .select(['reason', 'push_service', (eb) => eb.fn.countAll<number>().as('n')])
    .where('run_id', '=', run.id)
    .where('status', '=', 'failed')
    .groupBy(['reason', 'push_service'])
    .execute();
  const reset = await db
    .updateTable('deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: null, lease_until: null, error: null, reason: null, push_service: null })
    .where('run_id', '=', run.id)
    .where('status', '=', 'failed')
    .executeTakeFirst();
  const count = Number(reset.numUpdatedRows);
  if (!count) return 0;
  await db
    .updateTable('notification_runs')
    .set((eb) => ({
      status: 'sending',
      finished_at: null,
      last_error: null,
      lease_until: now - 1,
      failed_count: eb('failed_count', '-', count),
    }))
    .where('id', '=', run.id)
    .execute();
  await db
    .updateTable('notifications')
    .set((eb) => ({ failed_count: eb('failed_count', '-', count) }))
    .where('id', '=', run.notification_id)
    .execute();
  for (const group of groups) {
    if (!group.reason || !group.push_service) continue;
    await db
      .updateTable('notification_failures')
      .set({ count: sql<number>`case when count > ${Number(group.n)} then count - ${Number(group.n)} else 0 end` })
      .where('notification_id', '=', run.notification_id)
      .where('reason', '=', group.reason as FailureReason)
      .where('push_service', '=', group.push_service)
      .execute();
  }
  await db.deleteFrom('notification_failures').where('notification_id', '=', run.notification_id).where('count', '<=', 0).execute();
  return count;
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
  const sending = db.selectFrom('notification_runs').select('id').where('notification_id', '=', notificationId).where('status', '=', 'sending');
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
    .where('run_id', 'in', sending)
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

/** How many runs each notification had (a triggered one: how many times its event fired it). */
export async function runCountsOfNotifications(db: Db, notificationIds: string[]): Promise<Map<string, number>> {
  if (!notificationIds.length) return new Map();
  const rows = await db
    .selectFrom('notification_runs')
    .select(['notification_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('notification_id', 'in', notificationIds)
    .groupBy('notification_id')
    .execute();
  return new Map(rows.map((row) => [row.notification_id, Number(row.n)]));
}

// ---------------------------------------------------------------------------
// Recurring schedules and triggers (issue 4). Loaded for a whole page of
// notifications at once, so the list costs three queries, not one per row.

export async function schedulesOfNotifications(db: Db, notificationIds: string[]): Promise<Map<string, RecurringScheduleRow>> {
  if (!notificationIds.length) return new Map();
  const rows = await db.selectFrom('recurring_schedules').selectAll().where('notification_id', 'in', notificationIds).execute();
  return new Map(rows.map((row) => [row.notification_id, row]));
}

export async function triggersOfNotifications(db: Db, notificationIds: string[]): Promise<Map<string, NotificationTriggerRow>> {
  if (!notificationIds.length) return new Map();
  const rows = await db.selectFrom('notification_triggers').selectAll().where('notification_id', 'in', notificationIds).execute();
  return new Map(rows.map((row) => [row.notification_id, row]));
}

export function findScheduleOfNotification(db: Db, notificationId: string): Promise<RecurringScheduleRow | undefined> {
  return db.selectFrom('recurring_schedules').selectAll().where('notification_id', '=', notificationId).executeTakeFirst();
}

export function findTriggerOfNotification(db: Db, notificationId: string): Promise<NotificationTriggerRow | undefined> {
  return db.selectFrom('notification_triggers').selectAll().where('notification_id', '=', notificationId).executeTakeFirst();
}

/**
 * Deletes a notification's schedule and returns when it last fired. On
 * PostgreSQL the DELETE waits for a scheduler claiming an occurrence right now
 * and returns the row as that claim left it, so the replacement schedule
 * knows about that occurrence too.
 */
export async function deleteScheduleReturningLastOccurrence(db: Db, notificationId: string): Promise<{ lastOccurrenceAt: number | null } | undefined> {
  const row = await db.deleteFrom('recurring_schedules').where('notification_id', '=', notificationId).returning('last_occurrence_at').executeTakeFirst();
  return row ? { lastOccurrenceAt: row.last_occurrence_at } : undefined;
}

export async function insertSchedule(db: Db, row: Insertable<RecurringSchedulesTable>): Promise<void> {
  await db.insertInto('recurring_schedules').values(row).execute();
}

/** Changes a schedule; with `whenActive`, only if its active flag is still that (pause/resume race). True when changed. */
export async function updateSchedule(db: Db, scheduleId: string, changes: Updateable<RecurringSchedulesTable>, whenActive?: boolean): Promise<boolean> {
  let query = db.updateTable('recurring_schedules').set(changes).where('id', '=', scheduleId);
  if (whenActive !== undefined) query = query.where('is_active', '=', whenActive ? 1 : 0);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteScheduleOfNotification(db: Db, notificationId: string): Promise<void> {
  await db.deleteFrom('recurring_schedules').where('notification_id', '=', notificationId).execute();
}

export async function upsertTrigger(db: Db, row: Insertable<NotificationTriggersTable>): Promise<void> {
  await db
    .insertInto('notification_triggers')
    .values(row)
    .onConflict((oc) => oc.column('notification_id').doUpdateSet({ event_name: row.event_name, delay_minutes: row.delay_minutes, updated_at: row.updated_at }))
    .execute();
}

export async function deleteTriggerOfNotification(db: Db, notificationId: string): Promise<void> {
  await db.deleteFrom('notification_triggers').where('notification_id', '=', notificationId).execute();
}

export interface DueSchedule {
  schedule: RecurringScheduleRow;
  segmentId: string | null;
}

/** Active schedules of scheduled recurring notifications whose next occurrence is due. */
export async function findDueSchedules(db: Db, now: number, limit: number): Promise<DueSchedule[]> {
  const rows = await db
    .selectFrom('recurring_schedules')
    .innerJoin('notifications', 'notifications.id', 'recurring_schedules.notification_id')
    .selectAll('recurring_schedules')
    .select('notifications.segment_id as notification_segment_id')
    .where('recurring_schedules.is_active', '=', 1)
    .where('recurring_schedules.next_run_at', '<=', now)
    .where('notifications.status', '=', 'scheduled')
    .where('notifications.type', '=', 'RECURRING')
    .orderBy('recurring_schedules.next_run_at')
    .limit(limit)
    .execute();
  return rows.map(({ notification_segment_id, ...schedule }) => ({ schedule, segmentId: notification_segment_id }));
}

/**
 * Claims occurrence `expectedIndex` of a schedule: moves the schedule past it
 * only if nobody did first (compare-and-set on the index, re-checked under the
 * row lock on PostgreSQL). True when this call claimed it.
 */
export async function claimScheduleOccurrence(
  db: Db,
  scheduleId: string,
  expectedIndex: number,
  next: { index: number; runAt: number | null; lastOccurrenceAt: number | null; isActive: boolean; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('recurring_schedules')
    .set({
      next_occurrence_index: next.index,
      next_run_at: next.runAt,
      last_occurrence_at: next.lastOccurrenceAt,
      is_active: next.isActive ? 1 : 0,
      updated_at: next.now,
    })
    .where('id', '=', scheduleId)
    .where('next_occurrence_index', '=', expectedIndex)
    .where('is_active', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A recurring notification whose schedule has no occurrence left is completed (spec §4). */
export async function completeScheduledNotification(db: Db, notificationId: string, now: number): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: 'completed', completed_at: now, updated_at: now })
    .where('id', '=', notificationId)
    .where('status', '=', 'scheduled')
    .execute();
}

export interface ArmedTrigger {
  notificationId: string;
  delayMinutes: number;
  segmentId: string | null;
}

/** Spec §2 TRIGGERED: the site's armed (scheduled) triggered notifications listening for this event. */
export async function findArmedTriggers(db: Db, siteId: string, eventName: string): Promise<ArmedTrigger[]> {
  const rows = await db
    .selectFrom('notification_triggers')
    .innerJoin('notifications', 'notifications.id', 'notification_triggers.notification_id')
    .select(['notification_triggers.notification_id', 'notification_triggers.delay_minutes', 'notifications.segment_id'])
    .where('notification_triggers.site_id', '=', siteId)
    .where('notification_triggers.event_name', '=', eventName)
    .where('notifications.site_id', '=', siteId)
    .where('notifications.type', '=', 'TRIGGERED')
    .where('notifications.status', '=', 'scheduled')
    .orderBy('notification_triggers.notification_id')
    .execute();
  return rows.map((row) => ({ notificationId: row.notification_id, delayMinutes: row.delay_minutes, segmentId: row.segment_id }));
}

/** Cancels every run of a notification that has not started (a stopped schedule, a disarmed trigger's delayed sends). */
export async function cancelPendingRunsOfNotification(db: Db, notificationId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('notification_runs')
    .set({ status: 'cancelled', finished_at: now })
    .where('notification_id', '=', notificationId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function hasRunInProgress(db: Db, notificationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('notification_runs')
    .select('id')
    .where('notification_id', '=', notificationId)
    .where('status', '=', 'sending')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The runs of a notification after `afterId` in id order, a page at a time (the CSV report walks all of them). */
export function runsOfNotificationPage(db: Db, notificationId: string, afterId: string | null, limit: number) {
  let query = db.selectFrom('notification_runs').select(['id', 'due_at']).where('notification_id', '=', notificationId);
  if (afterId !== null) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit).execute();
}

/**
 * One page of a run's deliveries with their subscriber's description, by
 * subscriber id after `afterSubscriberId` (keyset over the unique
 * (run_id, subscriber_id) index: memory stays flat however large the send).
 */
export function reportDeliveriesPage(db: Db, runId: string, afterSubscriberId: string | null, limit: number) {
  let query = db
    .selectFrom('deliveries')
    .leftJoin('subscribers', 'subscribers.id', 'deliveries.subscriber_id')
    .select([
      'deliveries.subscriber_id',
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
    .where('deliveries.run_id', '=', runId);
  if (afterSubscriberId !== null) query = query.where('deliveries.subscriber_id', '>', afterSubscriberId);
  return query.orderBy('deliveries.subscriber_id').limit(limit).execute();
}
