// Folds recorded beacons into the counters (docs/delivery.md, "How beacons are
// counted"). A beacon marks its delivery and appends a row to
// `uncounted_beacons`; this adds a batch of those rows to the run's, the
// notification's and the site's hourly counters and tells the
// notification-clicked hooks, deleting the rows in the same transaction: a
// fold that fails or dies leaves its rows for the next one, a fold that
// commits has counted them, so each beacon is counted exactly once. It runs
// as a due-work source of the scheduler (every SCHEDULER_INTERVAL_MS): the
// database says what is waiting, any number of schedulers may fold at once
// (on PostgreSQL each takes rows the others do not hold), and a process
// serving only the API needs no timer of its own.
import type { AppContext } from '../../context';
import type { DueWorkSource } from '../../jobs/scheduler';
import { hourStart } from '../analytics/site-counters';
import type { NotificationClickedHook } from './hooks';
import * as repo from './repository';
import { inKeyOrder } from '../../db/lock-order';

/** Beacons per fold transaction: one transaction stays short (a few ms of row locks on the counters). */
export const FOLD_BATCH = 2_000;
/** Most fold transactions per scheduler tick (100,000 beacons); more wait for the next tick. */
const FOLDS_PER_TICK = 50;

type FoldContext = Pick<AppContext, 'db' | 'dbKind' | 'deliveryPorts' | 'notificationClickedHooks'>;

interface Sums {
  delivered: number;
  clicked: number;
}

function addTo<K>(sums: Map<K, Sums>, key: K, delivered: number, clicked: number): void {
  const sum = sums.get(key) ?? { delivered: 0, clicked: 0 };
  sum.delivered += delivered;
  sum.clicked += clicked;
  sums.set(key, sum);
}

/**
 * One fold: takes up to `limit` uncounted beacons and adds them to their
 * counters, in one transaction. Returns how many it took (fewer than `limit`:
 * nothing more was waiting, or another folder holds it).
 */
export async function foldBeaconCounts(ctx: FoldContext, limit = FOLD_BATCH): Promise<number> {
  const { addToSiteCounters } = ctx.deliveryPorts;
  const clickedHooks: readonly NotificationClickedHook[] = ctx.notificationClickedHooks ?? [];
  return ctx.db.transaction().execute(async (trx) => {
    const taken = await repo.takeUncountedBeacons(trx, ctx.dbKind, limit);
    if (!taken.length) return 0;
    const runs = new Map<string, Sums>();
    const notifications = new Map<string, Sums & { siteId: string }>();
    const hours = new Map<string, Sums & { siteId: string; hour: number }>();
    for (const beacon of taken) {
      addTo(runs, beacon.run_id, beacon.delivered, beacon.clicked);
      if (!notifications.has(beacon.notification_id)) notifications.set(beacon.notification_id, { siteId: beacon.site_id, delivered: 0, clicked: 0 });
      addTo(notifications, beacon.notification_id, beacon.delivered, beacon.clicked);
      const hour = hourStart(beacon.at);
      // Sorted as text below: the hour is padded so that site, then hour, is the order.
      const hourKey = `${beacon.site_id} ${String(hour).padStart(16, '0')}`;
      if (!hours.has(hourKey)) hours.set(hourKey, { siteId: beacon.site_id, hour, delivered: 0, clicked: 0 });
      addTo(hours, hourKey, beacon.delivered, beacon.clicked);
    }
    // The row order of every counting transaction (delivery/run-counters.ts): runs, notifications,
    // then stats_hourly, each in id order, so folders and send results never wait on each other crosswise.
    for (const [id, sum] of inKeyOrder(runs, ([id]) => [id])) await repo.addBeaconCounts(trx, 'notification_runs', id, sum.delivered, sum.clicked);
    for (const [id, sum] of inKeyOrder(notifications, ([id]) => [id])) await repo.addBeaconCounts(trx, 'notifications', id, sum.delivered, sum.clicked);
    // A site deleted since its beacons came has no rollup left to add to (and its rows are gone): skipped.
    const sites = await repo.existingSites(trx, [...new Set(taken.map((beacon) => beacon.site_id))]);
    for (const [, sum] of inKeyOrder(hours, ([key]) => [key])) {
      if (sites.has(sum.siteId)) await addToSiteCounters(trx, sum.siteId, sum.hour, { delivered: sum.delivered, clicked: sum.clicked });
    }
    for (const [notificationId, sum] of inKeyOrder(notifications, ([id]) => [id])) {
      if (!sum.clicked || !sites.has(sum.siteId)) continue;
      for (const hook of clickedHooks) await hook(trx, { siteId: sum.siteId, notificationId, clicks: sum.clicked });
    }
    return taken.length;
  });
}

/**
 * Folds until nothing is waiting that no other folder holds. What another
 * folder holds is counted when it commits.
 */
export async function foldAllBeaconCounts(ctx: FoldContext, maxFolds = Infinity): Promise<number> {
  let folded = 0;
  for (let i = 0; i < maxFolds; i++) {
    const taken = await foldBeaconCounts(ctx);
    folded += taken;
    if (taken < FOLD_BATCH) break;
  }
  return folded;
}

/** The scheduler's due-work source: every tick, what beacons came since the last (at most FOLDS_PER_TICK folds). */
export function beaconCountsSource(ctx: FoldContext): DueWorkSource {
  return {
    name: 'beacon-counts',
    async runDue() {
      await foldAllBeaconCounts(ctx, FOLDS_PER_TICK);
    },
  };
}
