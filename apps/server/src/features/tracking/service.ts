import type { AppContext } from '../../context';
import { readDeliveryToken } from '../../delivery/delivery-token';
import { addToRunCounters } from '../../delivery/runs';
import { badRequest } from '../../platform/errors';

export type BeaconType = 'delivered' | 'clicked';

/**
 * Records a "delivered" or "clicked" beacon from the service worker. The token
 * is signed by the server (forged ones are refused); a replay counts once; a
 * click also counts as a delivery if none was seen, so clicks never exceed
 * deliveries (docs/security.md, public endpoints).
 */
export function createTrackingService(ctx: Pick<AppContext, 'db' | 'clock' | 'secret'>) {
  const { db, clock, secret } = ctx;
  return {
    async record(type: BeaconType, token: string): Promise<{ counted: boolean }> {
      const deliveryId = readDeliveryToken(secret, token);
      if (deliveryId === undefined) throw badRequest('Invalid token');
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        const delivery = await trx
          .selectFrom('deliveries')
          .select(['id', 'run_id', 'notification_id', 'site_id', 'status', 'delivered_at', 'clicked_at'])
          .where('id', '=', deliveryId)
          .executeTakeFirst();
        // A genuine token whose delivery was deleted with its notification: nothing to count.
        if (!delivery) return { counted: false };
        const run = { id: delivery.run_id, notification_id: delivery.notification_id, site_id: delivery.site_id };

        if (type === 'delivered') {
          const updated = await trx.updateTable('deliveries').set({ delivered_at: now }).where('id', '=', deliveryId).where('delivered_at', 'is', null).executeTakeFirst();
          if (!Number(updated.numUpdatedRows)) return { counted: false };
          await addToRunCounters(trx, run, now, { delivered: 1 });
          return { counted: true };
        }

        const updated = await trx
          .updateTable('deliveries')
          .set({ clicked_at: now, delivered_at: delivery.delivered_at ?? now })
          .where('id', '=', deliveryId)
          .where('clicked_at', 'is', null)
          .executeTakeFirst();
        if (!Number(updated.numUpdatedRows)) return { counted: false };
        await addToRunCounters(trx, run, now, { clicked: 1, delivered: delivery.delivered_at === null ? 1 : 0 });
        return { counted: true };
      });
    },
  };
}
