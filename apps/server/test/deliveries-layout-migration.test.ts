import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { migrationsFor } from '../src/db/migrations';
import type { Database } from '../src/db/schema';
import { variantFigures } from '../src/features/notifications/ab-test-repository';
import { deliveriesOf } from '../src/features/subscribers/privacy-repository';
import { pushKeys } from './security/support/fixtures';
import { indexesOf, insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';

// Migrations 0034–0036 on a database of 0033 (docs/storage.md, "Bytes per
// delivery"): the rows lose their copies of the run's notification and site
// (0034), name their run by its number instead of its UUID (0035) and their
// subscriber by its number (0036), and keep everything else; an A/B test's
// figures and a subscriber's export read the same through the run and the
// subscriber; a new run or subscriber gets the next number (a subscriber's
// never one given before), and removing a run still removes its rows.

describe('migrations 0034, 0035 and 0036 on a database of 0033 with an A/B send in two runs', () => {
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

  it('keeps every row under its run and its subscriber by number, drops the copies and the notification index, and reads the same figures and export', async () => {
    const typed = db as unknown as Kysely<Database>;
    const columns = ['id', 'status', 'sent_at', 'delivered_at', 'clicked_at', 'variant_index'] as const;
    const rowsBefore = await db.selectFrom('deliveries').select([...columns, 'run_id', 'subscriber_id']).orderBy('id').execute();

    expect(await migrateToLatest(old.handle)).toEqual(expect.arrayContaining(['0034_deliveries_without_run_copies', '0035_deliveries_run_seq', '0036_deliveries_subscriber_seq']));

    const [row] = await db.selectFrom('deliveries').selectAll().limit(1).execute();
    expect(Object.keys(row!).sort()).toEqual([...columns, 'attempts', 'created_at', 'error', 'lease_until', 'next_attempt_at', 'push_service', 'reason', 'run_seq', 'subscriber_seq', 'throttle_window'].sort());
    const rowsAfter = await typed
      .selectFrom('deliveries')
      .innerJoin('notification_runs', 'notification_runs.seq', 'deliveries.run_seq')
      .innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq')
      .select([...columns.map((column) => `deliveries.${column}` as const), 'notification_runs.id as run_id', 'subscribers.id as subscriber_id'])
      .orderBy('deliveries.id')
      .execute();
    expect(rowsAfter.map((r) => ({ ...r, id: Number(r.id) }))).toEqual(rowsBefore.map((r) => ({ ...r, id: Number(r.id) })));
    const runs = await typed.selectFrom('notification_runs').select(['id', 'seq']).execute();
    expect(new Set(runs.map((run) => Number(run.seq))).size).toBe(2);
    const numbered = await typed.selectFrom('subscribers').select(['id', 'seq']).execute();
    expect(new Set(numbered.map((subscriber) => Number(subscriber.seq))).size).toBe(subscribers.length);
    const indexes = await indexesOf(old, 'deliveries');
    expect(indexes).toEqual(expect.arrayContaining(['deliveries_run_variant', 'deliveries_run_pending', 'deliveries_subscriber_status_sent']));
    expect(indexes).not.toContain('deliveries_notification_variant');

    // Variant 0: one sent and delivered; variant 1: three sent (two delivered, one clicked) and one failed.
    const figures = await variantFigures(typed, ids.notification);
    expect([...figures.values()].sort((a, b) => a.index - b.index)).toEqual([
      { index: 0, reach: 1, delivered: 1, clicked: 0 },
      { index: 1, reach: 3, delivered: 2, clicked: 1 },
    ]);
    const exported = await deliveriesOf(typed, subscribers[1]!);
    expect(exported).toMatchObject([{ notification_id: ids.notification, notification_title: 'T', run_id: ids.sampleRun, status: 'sent', clicked_at: T0 + 3_000 }]);

    // A run inserted now is numbered after the others; removing a run removes its rows.
    const later = crypto.randomUUID();
    await typed
      .insertInto('notification_runs')
      .values({ id: later, notification_id: ids.notification, site_id: ids.site, dedupe_key: `later:${later}`, status: 'pending', due_at: T0, segment_id: null, subscriber_id: null, after_run_id: null, fanout_cursor: null, fanout_done: 0, throttle_window_start: null, lease_owner: null, lease_until: null, started_at: null, finished_at: null, last_error: null, created_at: T0 })
      .execute();
    const { seq } = await typed.selectFrom('notification_runs').select('seq').where('id', '=', later).executeTakeFirstOrThrow();
    expect(Number(seq)).toBeGreaterThan(Math.max(...runs.map((run) => Number(run.seq))));
    await typed.deleteFrom('notification_runs').where('id', '=', ids.restRun).execute();
    expect(
      await typed.selectFrom('deliveries').innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq').select('subscribers.id as subscriber_id').orderBy('deliveries.id').execute(),
    ).toEqual(subscribers.slice(0, 2).map((id) => ({ subscriber_id: id })));

    // A subscriber inserted now is numbered after the others, and a number is never given twice, even once its subscriber is gone.
    const newcomer = async (i: number) => {
      const id = crypto.randomUUID();
      const endpoint = `https://fcm.googleapis.com/fcm/send/new-${i}`;
      await db
        .insertInto('subscribers')
        .values({ id, site_id: ids.site, endpoint, endpoint_hash: crypto.createHash('sha256').update(endpoint).digest('hex'), ...pushKeys(), is_active: 1, subscribed_at: T0, updated_at: T0 })
        .execute();
      return Number((await typed.selectFrom('subscribers').select('seq').where('id', '=', id).executeTakeFirstOrThrow()).seq);
    };
    const highest = Math.max(...numbered.map((subscriber) => Number(subscriber.seq)));
    const first = await newcomer(1);
    expect(first).toBeGreaterThan(highest);
    await typed.deleteFrom('subscribers').where('seq', '=', first).execute();
    expect(await newcomer(2)).toBeGreaterThan(first);
  });

  it('goes back down to 0034: each row named by its subscriber\'s UUID (0036) and its run\'s UUID (0035) again, the numbers gone', async () => {
    const migrator = new Migrator({ db: old.handle.db, provider: { getMigrations: async () => migrationsFor(old.handle.kind) } });
    expect((await migrator.migrateTo('0035_deliveries_run_seq')).error).toBeUndefined();
    expect(await db.selectFrom('deliveries').select(['subscriber_id']).orderBy('id').execute()).toEqual(subscribers.slice(0, 2).map((id) => ({ subscriber_id: id })));
    const [subscriber] = await db.selectFrom('subscribers').selectAll().limit(1).execute();
    expect(Object.keys(subscriber!)).not.toContain('seq');
    const result = await migrator.migrateTo('0034_deliveries_without_run_copies');
    expect(result.error).toBeUndefined();
    expect(await db.selectFrom('deliveries').select(['run_id', 'subscriber_id']).orderBy('id').execute()).toEqual(subscribers.slice(0, 2).map((id) => ({ run_id: ids.sampleRun, subscriber_id: id })));
    const [run] = await db.selectFrom('notification_runs').selectAll().limit(1).execute();
    expect(Object.keys(run!)).not.toContain('seq');
    expect(await indexesOf(old, 'deliveries')).toEqual(expect.arrayContaining(['deliveries_run_variant', 'deliveries_run_pending', 'deliveries_subscriber_status_sent']));
  });
});
