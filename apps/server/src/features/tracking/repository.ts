import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** The delivery a beacon token names, with what was already seen of it. */
export function findDeliveryForBeacon(db: Db, deliveryId: number) {
  return db
    .selectFrom('deliveries')
    .select(['id', 'run_id', 'notification_id', 'site_id', 'subscriber_id', 'status', 'delivered_at', 'clicked_at'])
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/** Records the first "delivered" beacon; false when one was already recorded (a replay). */
export async function markDelivered(db: Db, deliveryId: number, at: number): Promise<boolean> {
  const updated = await db.updateTable('deliveries').set({ delivered_at: at }).where('id', '=', deliveryId).where('delivered_at', 'is', null).executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Records the first click (and the delivery, if its beacon never came); false for a replay. */
export async function markClicked(db: Db, deliveryId: number, at: number, deliveredAt: number): Promise<boolean> {
  const updated = await db
    .updateTable('deliveries')
    .set({ clicked_at: at, delivered_at: deliveredAt })
    .where('id', '=', deliveryId)
    .where('clicked_at', 'is', null)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/**
 * The subscriber's latest delivered push (stale subscribers have none for 90+
 * days). After the delivery's row and before the counters: the row order of
 * the result transactions (delivery/run-counters.ts).
 */
export async function recordDeliveredTo(db: Db, subscriberId: string, at: number): Promise<void> {
  await db
    .updateTable('subscribers')
    .set({ last_delivered_at: at })
    .where('id', '=', subscriberId)
    .where((eb) => eb.or([eb('last_delivered_at', 'is', null), eb('last_delivered_at', '<', at)]))
    .execute();
}
