import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { Database, NotificationRow, NotificationStatus, NotificationType, NotificationsTable, RunRow } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** A notification if it belongs to one of the user's sites (else undefined: the caller answers 404). */
export function findNotificationOfUser(db: Db, userId: string, notificationId: string): Promise<NotificationRow | undefined> {
  return db
    .selectFrom('notifications')
    .innerJoin('sites', 'sites.id', 'notifications.site_id')
    .selectAll('notifications')
    .where('notifications.id', '=', notificationId)
    .where('sites.user_id', '=', userId)
    .executeTakeFirst();
}

export function findNotification(db: Db, notificationId: string): Promise<NotificationRow | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', notificationId).executeTakeFirst();
}

/** The site's notifications for the list page; drip-campaign steps live with their campaign, not here. */
export function listNotifications(db: Db, siteId: string, filter: { status?: NotificationStatus; type?: NotificationType }): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll().where('site_id', '=', siteId).where('source', '!=', 'campaign');
  if (filter.status) query = query.where('status', '=', filter.status);
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
  const counts: Record<string, number> = { all: 0 };
  for (const row of rows) {
    counts[row.status] = Number(row.n);
    counts.all = (counts.all ?? 0) + Number(row.n);
  }
  return counts;
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
 * Puts a failed run's failed deliveries back to pending and the run back to
 * sending with an expired lease: the scheduler's recovery sweep re-enqueues them.
 * Subscriptions that are gone stay gone.
 */
export async function reopenFailedRun(db: Db, run: RunRow, now: number): Promise<number> {
  const reset = await db
    .updateTable('deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: null, lease_until: null, error: null })
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
  return count;
}
