// The notifications themselves and the runs their state changes touch (send,
// cancel, retry). Schedules and triggers: automation-repository.ts; what the
// report and the performance page read: report-repository.ts.
import { NOTIFICATION_STATUSES, type FailureReason } from '@herald/contracts';
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import { membershipsOf } from '../../db/membership';
import type { Database, NotificationRow, NotificationStatus, NotificationType, NotificationsTable, RunRow } from '../../db/schema';
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

/** A page of the site's notifications for the list page, newest first; drip-campaign steps live with their campaign, not here. */
export function listNotifications(
  db: Db,
  siteId: string,
  filter: { status?: NotificationStatus[]; type?: NotificationType },
  page: { offset: number; limit: number },
): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll().where('site_id', '=', siteId).where('source', '!=', 'campaign');
  if (filter.status?.length) query = query.where('status', 'in', filter.status);
  if (filter.type) query = query.where('type', '=', filter.type);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute();
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

/** Only create.ts calls this: a new row comes from createNotification. */
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

/** Every run of a notification, by number: a one-time send's runs are one send (its zones, an A/B test's sample and rest). */
export function runsOfNotification(db: Db, notificationId: string): Promise<RunRow[]> {
  return db.selectFrom('notification_runs').selectAll().where('notification_id', '=', notificationId).orderBy('seq').execute();
}

/**
 * Of these notifications, those whose latest run retention compacted (docs/storage.md,
 * "Retention"): its deliveries are totals, so Retry has nothing to send again.
 */
export async function compactedNotifications(db: Db, notificationIds: string[]): Promise<Set<string>> {
  if (!notificationIds.length) return new Set();
  const rows = await db
    .selectFrom('notification_runs as run')
    .select('run.notification_id')
    .where('run.notification_id', 'in', notificationIds)
    .where('run.deliveries_compacted_at', 'is not', null)
    // The latest run, as Retry takes it (latestRunOfNotification).
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('notification_runs as later')
            .select('later.id')
            .whereRef('later.notification_id', '=', 'run.notification_id')
            .where((eb) => eb.or([eb('later.created_at', '>', eb.ref('run.created_at')), eb.and([eb('later.created_at', '=', eb.ref('run.created_at')), eb('later.id', '<', eb.ref('run.id'))])])),
        ),
      ),
    )
    .execute();
  return new Set(rows.map((row) => row.notification_id));
}

export function findRunByKey(db: Db, dedupeKey: string): Promise<RunRow | undefined> {
  return db.selectFrom('notification_runs').selectAll().where('dedupe_key', '=', dedupeKey).executeTakeFirst();
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
    // An occurrence split by zone is under way until its last zone went: its later zones wait as pending runs
    // (docs/delivery.md, "Local-time delivery"), and one occurrence goes out with one content. A split none of
    // whose zones has gone yet (all held for quiet hours) has sent nothing: it is only waiting.
    .where((eb) =>
      eb.or([
        eb('status', '=', 'sending'),
        eb.and([
          eb('status', '=', 'pending'),
          eb('zone_send_id', 'is not', null),
          eb.exists(
            eb
              .selectFrom('notification_runs as zone')
              .select('zone.id')
              .whereRef('zone.zone_send_id', '=', 'notification_runs.zone_send_id')
              .where('zone.status', 'not in', ['pending', 'cancelled']),
          ),
        ]),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Puts a finished run's failed deliveries back to pending and the run back to
 * sending with an expired lease: the scheduler's recovery sweep re-enqueues them.
 * Subscriptions that are gone stay gone. The failure groups lose what is
 * tried again, so the report counts each delivery once.
 *
 * On PostgreSQL it first locks the run's row, as a retention step does before
 * it deletes the run's deliveries (features/retention/repository.ts,
 * compactStep): the two take turns, so the failure groups read here are the
 * rows still there to reset, not rows a step is deleting and counting as
 * failed meanwhile. Call it in a transaction.
 */
export async function reopenFailedRun(db: Db, kind: DatabaseKind, run: RunRow, now: number): Promise<number> {
  const runRow = db.selectFrom('notification_runs').select('id').where('id', '=', run.id);
  if (!(await (kind === 'postgres' ? runRow.forNoKeyUpdate() : runRow).executeTakeFirst())) return 0;
  const groups = await db
    .selectFrom('deliveries')
    .select(['reason', 'push_service', (eb) => eb.fn.countAll<number>().as('n')])
    .where('run_seq', '=', run.seq)
    .where('status', '=', 'failed')
    .groupBy(['reason', 'push_service'])
    .execute();
  const reset = await db
    .updateTable('deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: null, lease_until: null, error: null, reason: null, push_service: null })
    .where('run_seq', '=', run.seq)
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
      retried_at: now,
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
