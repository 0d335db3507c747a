import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { pushKeys } from './security/support/fixtures';
import { insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';

// Migration 0026 on a database of 0023 (docs/delivery.md, "A/B tests"): an
// existing delivery carries no variant, the ab_tests table takes a test, and
// it goes with its notification.

describe('migration 0026 on a database of 0023 with a sent notification', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  const notification = crypto.randomUUID();
  const subscriber = crypto.randomUUID();
  const run = crypto.randomUUID();
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0023_frequency_cap');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    const endpoint = 'https://fcm.googleapis.com/fcm/send/old-0';
    await db
      .insertInto('subscribers')
      .values({ id: subscriber, site_id: site, endpoint, endpoint_hash: crypto.createHash('sha256').update(endpoint).digest('hex'), ...pushKeys(), is_active: 1, subscribed_at: T0, updated_at: T0 })
      .execute();
    await insertOneTimeSend(db, { site, notification, run }, { notification: 'completed', run: 'completed' }, T0);
    await db.insertInto('deliveries').values({ run_id: run, notification_id: notification, site_id: site, subscriber_id: subscriber, status: 'sent', attempts: 1, sent_at: T0, created_at: T0 }).execute();
  });
  afterAll(async () => old?.close());

  it('leaves existing deliveries without a variant, stores a test, and deletes it with its notification', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0026_ab_tests');
    expect(await db.selectFrom('deliveries').select('variant_index').execute()).toEqual([{ variant_index: null }]);
    await db
      .insertInto('ab_tests')
      .values({ notification_id: notification, site_id: site, variants: '[]', sample_percent: 20, decide_after_minutes: 60, created_at: T0, updated_at: T0 })
      .execute();
    expect(await db.selectFrom('ab_tests').select(['status', 'decide', 'sample_seen', 'sample_picked', 'winner_index']).execute()).toEqual([
      { status: 'testing', decide: 'auto', sample_seen: 0, sample_picked: 0, winner_index: null },
    ]);
    await db.deleteFrom('deliveries').execute();
    await db.deleteFrom('notification_runs').execute();
    await db.deleteFrom('notifications').where('id', '=', notification).execute();
    expect(await db.selectFrom('ab_tests').selectAll().execute()).toEqual([]);
  });
});
