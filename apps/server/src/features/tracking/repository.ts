import type { Kysely, Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

const BEACON_COLUMNS = ['run_id', 'notification_id', 'site_id', 'subscriber_id'] as const;

/**
 * Records the first "delivered" of a delivery (a click marks it too, when its
 * beacon never came); undefined when one was already recorded (a replay) or
 * the delivery is gone. One conditional UPDATE: two beacons of the same
 * delivery at once mark it once (PostgreSQL re-checks the condition after
 * the first one's row lock).
 */
export function markDelivered(db: Db, deliveryId: number, at: number) {
  return db.updateTable('deliveries').set({ delivered_at: at }).where('id', '=', deliveryId).where('delivered_at', 'is', null).returning(BEACON_COLUMNS).executeTakeFirst();
}

/** Records the first click; undefined for a replay or a delivery that is gone. */
export function markClicked(db: Db, deliveryId: number, at: number) {
  return db.updateTable('deliveries').set({ clicked_at: at }).where('id', '=', deliveryId).where('clicked_at', 'is', null).returning(BEACON_COLUMNS).executeTakeFirst();
}

/**
 * The subscriber's latest delivered push (stale subscribers have none for 90+
 * days). After the delivery's row: the row order of the result transactions
 * (delivery/run-counters.ts).
 */
export async function recordDeliveredTo(db: Db, subscriberId: string, at: number): Promise<void> {
  await db
    .updateTable('subscribers')
    .set({ last_delivered_at: at })
    .where('id', '=', subscriberId)
    .where((eb) => eb.or([eb('last_delivered_at', 'is', null), eb('last_delivered_at', '<', at)]))
    .execute();
}

/** A counted beacon waiting for the fold (an insert of a new row: no row another beacon waits for). */
export async function addUncountedBeacon(
  db: Db,
  beacon: { site_id: string; notification_id: string; run_id: string; at: number; delivered: number; clicked: number },
): Promise<void> {
  await db.insertInto('uncounted_beacons').values(beacon).execute();
}

/**
 * Takes (deletes and returns) up to `limit` uncounted beacons, oldest first,
 * in the caller's transaction: they are counted if it commits, and back for
 * the next fold if it does not. On PostgreSQL a second folder skips the rows
 * the first holds (FOR UPDATE SKIP LOCKED) and takes others instead of
 * waiting; SQLite runs one write transaction at a time.
 */
export function takeUncountedBeacons(trx: Transaction<Database>, kind: DatabaseKind, limit: number) {
  return trx
    .deleteFrom('uncounted_beacons')
    .where('id', 'in', (eb) => {
      const oldest = eb.selectFrom('uncounted_beacons').select('id').orderBy('id').limit(limit);
      return kind === 'postgres' ? oldest.forUpdate().skipLocked() : oldest;
    })
    .returning(['site_id', 'notification_id', 'run_id', 'at', 'delivered', 'clicked'])
    .execute();
}

/** Of these sites, the ones that still exist (a deleted site's beacons count nowhere). */
export async function existingSites(db: Db, siteIds: readonly string[]): Promise<Set<string>> {
  if (!siteIds.length) return new Set();
  return new Set((await db.selectFrom('sites').select('id').where('id', 'in', siteIds).execute()).map((row) => row.id));
}

/** Adds folded beacons to a run's or a notification's counters (a row that is gone matches nothing). */
export async function addBeaconCounts(db: Db, table: 'notification_runs' | 'notifications', id: string, delivered: number, clicked: number): Promise<void> {
  await db
    .updateTable(table)
    .set((eb) => ({ delivered_count: eb('delivered_count', '+', delivered), clicked_count: eb('clicked_count', '+', clicked) }))
    .where('id', '=', id)
    .execute();
}
