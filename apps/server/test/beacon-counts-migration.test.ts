import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context';
import { migrateToLatest } from '../src/db/migrate';
import type { Database } from '../src/db/schema';
import { addSendToSiteCounters } from '../src/features/analytics/site-counters';
import { foldAllBeaconCounts } from '../src/features/tracking/fold';
import { insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';

// Migration 0028 on a database of 0026 with a send whose beacons were counted
// the old way (docs/delivery.md, "How beacons are counted"): the counters keep
// what they hold, and beacons recorded after the upgrade are folded onto them.
describe('migration 0028 on a database of 0026 with beacons already counted', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const ids = { user: crypto.randomUUID(), site: crypto.randomUUID(), notification: crypto.randomUUID(), run: crypto.randomUUID() };
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0026_ab_tests');
    db = old.db;
    await insertOwnerAndSite(db, ids, T0);
    await insertOneTimeSend(db, ids, { notification: 'completed', run: 'completed' }, T0);
    for (const table of ['notifications', 'notification_runs']) {
      await db.updateTable(table).set({ total_count: 5, sent_count: 5, delivered_count: 3, clicked_count: 1 }).where('id', '=', table === 'notifications' ? ids.notification : ids.run).execute();
    }
    await db.insertInto('stats_hourly').values({ site_id: ids.site, hour_start: T0, sent: 5, delivered: 3, clicked: 1 }).execute();
  });
  afterAll(async () => old?.close());

  it('keeps the counters as they were, and folds later beacons onto them once', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0028_beacon_counts');
    const counters = async () => ({
      notification: await db.selectFrom('notifications').select(['delivered_count', 'clicked_count']).where('id', '=', ids.notification).executeTakeFirstOrThrow(),
      run: await db.selectFrom('notification_runs').select(['delivered_count', 'clicked_count']).where('id', '=', ids.run).executeTakeFirstOrThrow(),
      hourly: await db.selectFrom('stats_hourly').select(['delivered', 'clicked']).where('site_id', '=', ids.site).where('hour_start', '=', T0).executeTakeFirstOrThrow(),
    });
    const ctx = { db: old.handle.db as Kysely<Database>, dbKind: old.handle.kind, deliveryPorts: { addToSiteCounters: addSendToSiteCounters } } as unknown as AppContext;
    expect(await foldAllBeaconCounts(ctx)).toBe(0);
    expect(await counters()).toEqual({ notification: { delivered_count: 3, clicked_count: 1 }, run: { delivered_count: 3, clicked_count: 1 }, hourly: { delivered: 3, clicked: 1 } });

    await db.insertInto('uncounted_beacons').values({ site_id: ids.site, notification_id: ids.notification, run_id: ids.run, at: T0 + 60_000, delivered: 1, clicked: 1 }).execute();
    expect(await foldAllBeaconCounts(ctx)).toBe(1);
    expect(await foldAllBeaconCounts(ctx)).toBe(0);
    expect(await counters()).toEqual({ notification: { delivered_count: 4, clicked_count: 2 }, run: { delivered_count: 4, clicked_count: 2 }, hourly: { delivered: 4, clicked: 2 } });
  });
});
