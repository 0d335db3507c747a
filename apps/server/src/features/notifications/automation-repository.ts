// Recurring schedules and triggers (issue 4), and how many times a triggered
// notification fired. The list loads them for a whole page of notifications at
// once, so it costs three queries, not one per row.
import { finalRunStatus } from '../../delivery/runs';
import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { Database, NotificationTriggerRow, NotificationTriggersTable, RecurringScheduleRow, RecurringSchedulesTable } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

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

/** Paused recurring notifications whose end date has passed: no occurrence is left for a resume to send. */
export async function findPausedSchedulesPastEnd(db: Db, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('recurring_schedules')
    .innerJoin('notifications', 'notifications.id', 'recurring_schedules.notification_id')
    .select('recurring_schedules.notification_id')
    .where('recurring_schedules.is_active', '=', 0)
    // Paused keeps its next run; an ended or cancelled schedule has none: index recurring_schedules_due reads paused ones only.
    .where('recurring_schedules.next_run_at', 'is not', null)
    .where('recurring_schedules.end_at', '<=', now)
    .where('notifications.status', '=', 'scheduled')
    .where('notifications.type', '=', 'RECURRING')
    .limit(limit)
    .execute();
  return rows.map((row) => row.notification_id);
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

/**
 * A recurring notification whose schedule has no occurrence left ends (spec
 * §4: "completed"): while an occurrence of it is still to send or sending, it
 * is "sending", and the last run's finish ends it (delivery/runs.ts,
 * completeRunIfFinished); else now, in the state its counters say, so it is
 * never a green "completed" when part of an occurrence failed.
 */
export async function endRecurringNotification(db: Db, notificationId: string, now: number): Promise<void> {
  // The notification's row lock first (a no-op write: PostgreSQL locks the row, SQLite has one writer): a last run
  // finishing at this moment locks it too before it reads the status, so it sees "sending", or this sees it finished.
  const live = await db.updateTable('notifications').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('id', '=', notificationId).where('status', '=', 'scheduled').executeTakeFirst();
  if (!Number(live.numUpdatedRows)) return;
  const open = await db.selectFrom('notification_runs').select('id').where('notification_id', '=', notificationId).where('status', 'in', ['pending', 'sending']).limit(1).executeTakeFirst();
  const counts = open ? undefined : await db.selectFrom('notifications').select(['sent_count', 'failed_count', 'expired_count']).where('id', '=', notificationId).executeTakeFirst();
  await db
    .updateTable('notifications')
    .set(counts ? { status: finalRunStatus(counts), completed_at: now, updated_at: now } : { status: 'sending', updated_at: now })
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

/**
 * PostgreSQL: share-locks these notifications' rows, in key order, until the
 * caller's transaction ends, and says which are still armed (triggered.ts,
 * fireTriggers: a cancel changes the row first, so it waits for the lock).
 */
export async function lockArmedNotifications(db: Db, notificationIds: string[]): Promise<Set<string>> {
  const rows = await db.selectFrom('notifications').select(['id', 'status']).where('id', 'in', notificationIds).orderBy('id').forShare().execute();
  return new Set(rows.filter((row) => row.status === 'scheduled').map((row) => row.id));
}

/** Cancels these runs if they have not started. */
export async function cancelRuns(db: Db, runIds: string[], now: number): Promise<void> {
  await db.updateTable('notification_runs').set({ status: 'cancelled', finished_at: now }).where('id', 'in', runIds).where('status', '=', 'pending').execute();
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
