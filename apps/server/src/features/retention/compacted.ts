// What other features read of compacted deliveries (docs/storage.md,
// "Retention"): a published entry point (eslint.config.js). A figure counted
// from delivery rows is the rows that remain plus these groups.
import type { Kysely, Transaction } from 'kysely';
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
