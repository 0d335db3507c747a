// What other features read of compacted deliveries (docs/storage.md,
// "Retention"): a published entry point (eslint.config.js). A figure counted
// from delivery rows is the rows that remain plus these groups.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** Each A/B variant's compacted figures of a notification (added to what its remaining rows say). */
export function compactedVariantFigures(db: Db, notificationId: string) {
  return db
    .selectFrom('compacted_deliveries')
    .select((eb) => [
      'variant_index',
      eb.fn.sum<number>(eb.case().when('status', '=', 'sent').then(eb.ref('count')).else(0).end()).as('reach'),
      eb.fn.sum<number>('delivered').as('delivered'),
      eb.fn.sum<number>('clicked').as('clicked'),
    ])
    .where('notification_id', '=', notificationId)
    .where('variant_index', '>=', 0)
    .groupBy('variant_index')
    .execute();
}

/** A notification's compacted groups, for the CSV report (one line each). */
export function compactedGroupsOfNotification(db: Db, notificationId: string) {
  return db
    .selectFrom('compacted_deliveries')
    .select(['variant_index', 'status', 'reason', 'push_service', 'count', 'delivered', 'clicked'])
    .where('notification_id', '=', notificationId)
    .orderBy('status')
    .orderBy('reason')
    .orderBy('push_service')
    .orderBy('variant_index')
    .execute();
}

/** The advisory lock class of report holds (PostgreSQL): the second key is the notification's. */
export const REPORT_READ_LOCK = 'herald:report-read';

/** How long a report download holds compaction of its notification off; it refreshes the hold as it goes. */
export const REPORT_READ_HOLD_MS = 10 * 60_000;

/**
 * Holds compaction of a notification off until `until` while its CSV report
 * is read (docs/storage.md, "Retention"): the report writes the kept rows and
 * then the compacted groups, so a step in between would count rows twice.
 * `readId` names the download: it refreshes its own hold and removes it at
 * its end (releaseReportHold). On PostgreSQL a new hold is written under the
 * notification's advisory lock, which every compaction step holds shared
 * while it works (retention/repository.ts, compactStep): a step under way
 * finishes first, and a later one sees the hold. On SQLite one writer at a
 * time does the same.
 */
export async function holdCompactionForReport(db: Kysely<Database>, kind: DatabaseKind, hold: { readId: string; notificationId: string }, now: number, until: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (kind === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${REPORT_READ_LOCK}), hashtext(${hold.notificationId}))`.execute(trx);
    // Holds of downloads lost without their end.
    await trx.deleteFrom('report_reads').where('notification_id', '=', hold.notificationId).where('until', '<', now).execute();
    await trx
      .insertInto('report_reads')
      .values({ id: hold.readId, notification_id: hold.notificationId, until })
      .onConflict((oc) => oc.column('id').doUpdateSet({ until }))
      .execute();
  });
}

/** A download's end: its hold goes. */
export async function releaseReportHold(db: Kysely<Database>, readId: string): Promise<void> {
  await db.deleteFrom('report_reads').where('id', '=', readId).execute();
}
