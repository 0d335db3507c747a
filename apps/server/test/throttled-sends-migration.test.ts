import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { runSeqOf } from '../src/db/run-seq';

// Migration 0024 on a database of 0023 (docs/delivery.md, "Throttled sends"):
// existing notifications are not throttled, and a run and its delivery in
// progress carry no minute, so they go on sending as before.

describe('migration 0024 on a database of 0023 with a send in progress', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  const notification = crypto.randomUUID();
  const run = crypto.randomUUID();
  const subscriber = crypto.randomUUID();
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0023_frequency_cap');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    await insertOneTimeSend(db, { site, notification, run }, { notification: 'sending', run: 'sending' }, T0);
    await db
      .insertInto('subscribers')
      .values({ id: subscriber, site_id: site, endpoint: 'https://push.example/1', endpoint_hash: 'h1', p256dh: 'p', auth: 'a', is_active: 1, subscribed_at: T0, updated_at: T0 })
      .execute();
    await db
      .insertInto('deliveries')
      .values({ run_id: run, notification_id: notification, site_id: site, subscriber_id: subscriber, status: 'pending', created_at: T0 })
      .execute();
  });
  afterAll(async () => old?.close());

  it('adds the throttle columns empty: nothing existing is throttled', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0024_throttled_sends');
    expect(await db.selectFrom('notifications').select('throttle_per_minute').where('id', '=', notification).executeTakeFirstOrThrow()).toEqual({ throttle_per_minute: null });
    expect(await db.selectFrom('notification_runs').select(['throttle_window_start', 'throttle_window_used']).where('id', '=', run).executeTakeFirstOrThrow()).toEqual({
      throttle_window_start: null,
      throttle_window_used: 0,
    });
    // The run is named by its number since migration 0035.
    expect(await db.selectFrom('deliveries').select('throttle_window').where('run_seq', '=', runSeqOf(run)).executeTakeFirstOrThrow()).toEqual({ throttle_window: null });
  });
});
