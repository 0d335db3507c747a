// What other features read of compacted deliveries (docs/storage.md,
// "Retention"): a published entry point (eslint.config.js). A figure counted
// from delivery rows is the rows that remain plus these groups.
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { CompactedDeliveriesTable, Database, DeliveryStatus } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** A delivery row removed (by retention, or with an erased subscriber) whose outcome the groups keep. */
export interface RemovedDelivery {
  notification_id: string;
  subscriber_seq: number;
  status: DeliveryStatus;
  reason: string | null;
  push_service: string | null;
  variant_index: number | null;
  sent_at: number | null;
  delivered_at: number | null;
  clicked_at: number | null;
}

type CompactedGroup = Insertable<CompactedDeliveriesTable>;

/**
 * Adds removed delivery rows to their notifications' groups, so the CSV report
 * and the A/B figures still count them (docs/storage.md, "Retention").
 */
export async function addToCompacted(trx: Transaction<Database>, removed: readonly RemovedDelivery[]): Promise<void> {
  const groups = new Map<string, CompactedGroup>();
  for (const row of removed) {
    const variant = row.variant_index ?? -1;
    const reason = row.reason ?? '';
    const pushService = row.push_service ?? '';
    const key = `${row.notification_id} ${variant} ${row.status} ${reason} ${pushService}`;
    const group = groups.get(key) ?? { notification_id: row.notification_id, variant_index: variant, status: row.status, reason, push_service: pushService, count: 0, delivered: 0, clicked: 0 };
    group.count += 1;
    if (row.delivered_at !== null) group.delivered += 1;
    if (row.clicked_at !== null) group.clicked += 1;
    groups.set(key, group);
  }
  // Sorted: two compactions of one notification's runs take its rows in the same order (PostgreSQL).
  const order = (a: CompactedGroup, b: CompactedGroup) => cmp(a.notification_id, b.notification_id) || a.variant_index - b.variant_index || cmp(a.status, b.status) || cmp(a.reason, b.reason) || cmp(a.push_service, b.push_service);
  for (const group of [...groups.values()].sort(order)) {
    await trx
      .insertInto('compacted_deliveries')
      .values(group)
      .onConflict((oc) =>
        oc.columns(['notification_id', 'variant_index', 'status', 'reason', 'push_service']).doUpdateSet((eb) => ({
          count: eb('compacted_deliveries.count', '+', eb.ref('excluded.count')),
          delivered: eb('compacted_deliveries.delivered', '+', eb.ref('excluded.delivered')),
          clicked: eb('compacted_deliveries.clicked', '+', eb.ref('excluded.clicked')),
        })),
      )
      .execute();
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Each A/B variant's compacted figures of a notification, as a query to add
 * to the one over its remaining rows (UNION ALL: one statement, one snapshot,
 * so a compaction committing between two reads cannot count rows twice).
 */
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
    .groupBy('variant_index');
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
