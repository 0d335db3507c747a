import type { AppContext } from '../../context';
import { isTestPushToken, readDeliveryToken } from '../../delivery/delivery-token';
import { addToRunCounters } from '../../delivery/run-counters';
import { badRequest } from '../../platform/errors';
import type { NotificationClickedHook } from './hooks';
import * as repo from './repository';

export type BeaconType = 'delivered' | 'clicked';

/**
 * Records a "delivered" or "clicked" beacon from the service worker. The token
 * is signed by the server (forged ones are refused); a replay counts once; a
 * click also counts as a delivery if none was seen, so clicks never exceed
 * deliveries (docs/security.md, public endpoints). A test push's token is
 * genuine but names no delivery: answered, never counted.
 */
export function createTrackingService(ctx: Pick<AppContext, 'db' | 'clock' | 'secret' | 'deliveryPorts' | 'notificationClickedHooks'>) {
  const { db, clock, secret } = ctx;
  const { addToSiteCounters } = ctx.deliveryPorts;
  const clickedHooks: readonly NotificationClickedHook[] = ctx.notificationClickedHooks ?? [];
  return {
    async record(type: BeaconType, token: string): Promise<{ counted: boolean }> {
      // A test push's beacon is accepted and counts nowhere (delivery/test-push.ts).
      if (isTestPushToken(secret, token)) return { counted: false };
      const deliveryId = readDeliveryToken(secret, token);
      if (deliveryId === undefined) throw badRequest('Invalid token');
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        const delivery = await repo.findDeliveryForBeacon(trx, deliveryId);
        // A genuine token whose delivery was deleted with its notification: nothing to count.
        if (!delivery) return { counted: false };
        const run = { id: delivery.run_id, notification_id: delivery.notification_id, site_id: delivery.site_id };

        if (type === 'delivered') {
          if (!(await repo.markDelivered(trx, deliveryId, now))) return { counted: false };
          await repo.recordDeliveredTo(trx, delivery.subscriber_id, now);
          await addToRunCounters(trx, addToSiteCounters, run, now, { delivered: 1 });
          return { counted: true };
        }

        if (!(await repo.markClicked(trx, deliveryId, now, delivery.delivered_at ?? now))) return { counted: false };
        if (delivery.delivered_at === null) await repo.recordDeliveredTo(trx, delivery.subscriber_id, now);
        await addToRunCounters(trx, addToSiteCounters, run, now, { clicked: 1, delivered: delivery.delivered_at === null ? 1 : 0 });
        for (const hook of clickedHooks) await hook(trx, { siteId: delivery.site_id, notificationId: delivery.notification_id, clickedAt: now });
        return { counted: true };
      });
    },
  };
}
