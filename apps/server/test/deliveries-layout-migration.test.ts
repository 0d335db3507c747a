import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import type { Database } from '../src/db/schema';
import { variantFigures } from '../src/features/notifications/ab-test-repository';
import { deliveriesOf } from '../src/features/subscribers/privacy-repository';
import { pushKeys } from './security/support/fixtures';
import { indexesOf, insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';

// Migration 0034 on a database of 0033 (docs/storage.md, "Bytes per
// delivery"): the rows lose their copies of the run's notification and site
// and keep everything else; an A/B test's figures and a subscriber's export,
// which read those copies, read the same through the run.

describe('migration 0034 on a database of 0033 with an A/B send in two runs', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const ids = { user: crypto.randomUUID(), site: crypto.randomUUID(), notification: crypto.randomUUID(), sampleRun: crypto.randomUUID(), restRun: crypto.randomUUID() };
  const subscribers = Array.from({ length: 5 }, () => crypto.randomUUID());
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0033_personal_run_retention');
    db = old.db;
    await insertOwnerAndSite(db, { user: ids.user, site: ids.site }, T0);
    await insertOneTimeSend(db, { site: ids.site, notification: ids.notification, run: ids.sampleRun }, { notification: 'completed', run: 'completed' }, T0);
    await db
      .insertInto('notification_runs')
      .values({ id: ids.restRun, notification_id: ids.notification, site_id: ids.site, dedupe_key: `ab-rest:${ids.notification}`, status: 'completed', due_at: T0 + 1, created_at: T0 + 1 })
      .execute();
    for (const [i, id] of subscribers.entries()) {
      const endpoint = `https://fcm.googleapis.com/fcm/send/old-${i}`;
      await db
        .insertInto('subscribers')
        .values({ id, site_id: ids.site, endpoint, endpoint_hash: crypto.createHash('sha256').update(endpoint).digest('hex'), ...pushKeys(), is_active: 1, subscribed_at: T0, updated_at: T0 })
        .execute();
      // Two in the sample (variants 0 and 1), three in the rest (the winner, 1); one failed.
      await db
        .insertInto('deliveries')
        .values({
          run_id: i < 2 ? ids.sampleRun : ids.restRun,
          notification_id: ids.notification,
          site_id: ids.site,
          subscriber_id: id,
          status: i === 4 ? 'failed' : 'sent',
          attempts: 1,
          sent_at: i === 4 ? null : T0 + 1_000,
          delivered_at: i < 3 ? T0 + 2_000 : null,
          clicked_at: i === 1 ? T0 + 3_000 : null,
          variant_index: i === 0 ? 0 : 1,
          created_at: T0,
        })
        .execute();
    }
  });
  afterAll(async () => old?.close());

  it('drops the two columns and the notification index, keeps every row, and reads the same figures and export through the run', async () => {
    const typed = db as unknown as Kysely<Database>;
    const rowsBefore = await db.selectFrom('deliveries').select(['id', 'run_id', 'subscriber_id', 'status', 'sent_at', 'delivered_at', 'clicked_at', 'variant_index']).orderBy('id').execute();
    const figuresBefore = await variantFigures(typed, ids.notification);
    expect([...figuresBefore.values()].sort((a, b) => a.index - b.index)).toEqual([
      { index: 0, reach: 1, delivered: 1, clicked: 0 },
      { index: 1, reach: 3, delivered: 2, clicked: 1 },
    ]);

    expect(await migrateToLatest(old.handle)).toContain('0034_deliveries_without_run_copies');

    const [row] = await db.selectFrom('deliveries').selectAll().limit(1).execute();
    expect(Object.keys(row!)).not.toContain('notification_id');
    expect(Object.keys(row!)).not.toContain('site_id');
    expect(await db.selectFrom('deliveries').select(['id', 'run_id', 'subscriber_id', 'status', 'sent_at', 'delivered_at', 'clicked_at', 'variant_index']).orderBy('id').execute()).toEqual(rowsBefore);
    const indexes = await indexesOf(old, 'deliveries');
    expect(indexes).toContain('deliveries_run_variant');
    expect(indexes).not.toContain('deliveries_notification_variant');

    expect(await variantFigures(typed, ids.notification)).toEqual(figuresBefore);
    const exported = await deliveriesOf(typed, subscribers[1]!);
    expect(exported).toMatchObject([{ notification_id: ids.notification, notification_title: 'T', run_id: ids.sampleRun, status: 'sent', clicked_at: T0 + 3_000 }]);
  });
});
