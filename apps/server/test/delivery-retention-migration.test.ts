import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config';
import { migrateToLatest } from '../src/db/migrate';
import type { Database } from '../src/db/schema';
import { compactOldDeliveries } from '../src/features/retention/service';
import { insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { runSeqOf } from '../src/db/run-seq';
import { subscriberSeqOf } from '../src/db/subscriber-seq';

// Migration 0027 on a database of 0026 (docs/storage.md, "Retention"): a send
// finished before the upgrade keeps its rows until the retention has passed,
// then compaction takes them like any other; the subscriber gets its
// last-* columns; deliveries_subscriber is gone (0023's index serves it).

describe('migration 0027 on a database of 0026 with a finished send', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const DAY = 86_400_000;
  const ids = { user: crypto.randomUUID(), site: crypto.randomUUID(), notification: crypto.randomUUID(), run: crypto.randomUUID() };
  const subscribers = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0026_ab_tests');
    db = old.db;
    await insertOwnerAndSite(db, { user: ids.user, site: ids.site }, T0);
    await insertOneTimeSend(db, { site: ids.site, notification: ids.notification, run: ids.run }, { notification: 'completed_with_errors', run: 'completed_with_errors' }, T0);
    await db.updateTable('notification_runs').set({ finished_at: T0 + 60_000 }).where('id', '=', ids.run).execute();
    for (const [i, id] of subscribers.entries()) {
      await db
        .insertInto('subscribers')
        .values({ id, site_id: ids.site, endpoint: `https://fcm.googleapis.com/fcm/send/${id}`, endpoint_hash: id, p256dh: 'p', auth: 'a', is_active: 1, subscribed_at: T0, updated_at: T0 })
        .execute();
      await db
        .insertInto('deliveries')
        .values({
          run_id: ids.run,
          notification_id: ids.notification,
          site_id: ids.site,
          subscriber_id: id,
          status: i === 2 ? 'failed' : 'sent',
          reason: i === 2 ? 'server_error' : null,
          push_service: i === 2 ? 'fcm' : null,
          attempts: 1,
          sent_at: i === 2 ? null : T0 + 1_000,
          delivered_at: i === 0 ? T0 + 2_000 : null,
          clicked_at: i === 0 ? T0 + 3_000 : null,
          created_at: T0,
        })
        .execute();
    }
  });
  afterAll(async () => old?.close());

  it('adds the columns and table, drops the redundant index, and the old send is compacted once past the retention', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0027_delivery_retention');
    const typed = db as unknown as Kysely<Database>;
    const run = await typed.selectFrom('notification_runs').select('deliveries_compacted_at').where('id', '=', ids.run).executeTakeFirstOrThrow();
    expect(run.deliveries_compacted_at).toBeNull();
    const indexRows =
      old.handle.kind === 'sqlite'
        ? await db.selectFrom('sqlite_master').select('name').where('type', '=', 'index').where('tbl_name', '=', 'deliveries').execute()
        : await db.selectFrom('pg_indexes').select('indexname as name').where('tablename', '=', 'deliveries').execute();
    const indexes = indexRows.map((row: { name: string }) => row.name);
    expect(indexes).not.toContain('deliveries_subscriber');
    expect(indexes).toContain('deliveries_subscriber_status_sent');

    const ctx = { db: typed, dbKind: old.handle.kind, config: { deliveryRetentionDays: 30 } as Config };
    expect(await compactOldDeliveries(ctx, T0 + 29 * DAY)).toBe(0);
    expect(await compactOldDeliveries(ctx, T0 + 31 * DAY)).toBe(3);
    expect(await typed.selectFrom('deliveries').select('id').execute()).toEqual([]);
    const groups = await typed.selectFrom('compacted_deliveries').select(['status', 'reason', 'push_service', 'count', 'delivered', 'clicked', 'variant_index']).orderBy('status').execute();
    expect(groups).toEqual([
      { status: 'failed', reason: 'server_error', push_service: 'fcm', count: 1, delivered: 0, clicked: 0, variant_index: -1 },
      { status: 'sent', reason: '', push_service: 'fcm', count: 2, delivered: 1, clicked: 1, variant_index: -1 },
    ]);
    const last = await typed.selectFrom('subscribers').select(['id', 'last_sent_at', 'last_clicked_at']).execute();
    expect(new Map(last.map((row) => [row.id, [row.last_sent_at, row.last_clicked_at]]))).toEqual(
      new Map([
        [subscribers[0], [T0 + 1_000, T0 + 3_000]],
        [subscribers[1], [T0 + 1_000, null]],
        [subscribers[2], [null, null]],
      ]),
    );
  });

  it('compacts a triggered notification’s runs of one delivery each many per transaction, into one row per group', async () => {
    const typed = db as unknown as Kysely<Database>;
    const triggered = crypto.randomUUID();
    await typed
      .insertInto('notifications')
      .values({ id: triggered, site_id: ids.site, type: 'TRIGGERED', source: 'dashboard', title: 'T', message: 'M', destination_url: 'https://shop.example/', icon_url: null, image_url: null, actions: null, topic: null, throttle_per_minute: null, segment_id: null, status: 'scheduled', scheduled_at: null, sent_at: null, completed_at: null, last_error: null, created_at: T0, updated_at: T0 })
      .execute();
    for (let i = 0; i < 30; i++) {
      const run = crypto.randomUUID();
      const subscriber = subscribers[i % subscribers.length]!;
      await typed
        .insertInto('notification_runs')
        .values({ id: run, notification_id: triggered, site_id: ids.site, dedupe_key: `trigger:${triggered}:${subscriber}:${i}`, status: 'completed', due_at: T0 + i, segment_id: null, subscriber_id: subscriber, after_run_id: null, fanout_cursor: null, fanout_done: 1, lease_owner: null, lease_until: null, started_at: T0 + i, finished_at: T0 + i, last_error: null, throttle_window_start: null, created_at: T0 })
        .execute();
      await typed
        .insertInto('deliveries')
        .values({ run_seq: runSeqOf(run), subscriber_seq: subscriberSeqOf(subscriber), status: 'sent', attempts: 1, next_attempt_at: null, lease_until: null, throttle_window: null, error: null, reason: null, push_service: null, sent_at: T0 + i, delivered_at: null, clicked_at: null, created_at: T0 })
        .execute();
    }
    const ctx = { db: typed, dbKind: old.handle.kind, config: { deliveryRetentionDays: 30 } as Config };
    // One transaction's budget takes all 30 runs.
    expect(await compactOldDeliveries(ctx, T0 + 31 * DAY, { everyMs: 0, batchSize: 1_000, maxBatches: 1 })).toBe(30);
    expect(await typed.selectFrom('compacted_deliveries').select(['status', 'push_service', 'count']).where('notification_id', '=', triggered).execute()).toEqual([{ status: 'sent', push_service: 'fcm', count: 30 }]);
    const marked = await typed.selectFrom('notification_runs').select('deliveries_compacted_at').where('notification_id', '=', triggered).execute();
    expect(marked.every((run) => run.deliveries_compacted_at === T0 + 31 * DAY)).toBe(true);
  });
});
