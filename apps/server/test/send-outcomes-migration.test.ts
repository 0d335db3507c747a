import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config';
import { openDatabase } from '../src/db/database';
import { migrationsFor } from '../src/db/migrations';
import { generateVapidKeys } from '../src/delivery/vapid-keys';
import { ManualClock } from '../src/platform/clock';
import { PasswordHasher } from '../src/platform/passwords';
import { pushKeys } from './security/support/fixtures';
import { createTestApp, type TestApp } from './support/test-app';
import { runSeqOf } from '../src/db/run-seq';

// Issue 11, for sends stored before migration 0011: the old code counted 404/410
// ("gone") and "unsubscribed before sending" deliveries as failed. After the
// migration the same send reads as the outcome model says — expired and
// skipped apart from failed, completed_with_errors when something failed — and
// subscribers carry their latest delivered beacon for the stale clean-up.

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 5, 9);
const PASSWORD = 'correct horse battery staple';
const ids = {
  user: crypto.randomUUID(),
  site: crypto.randomUUID(),
  notification: crypto.randomUUID(),
  run: crypto.randomUUID(),
  subscribers: Array.from({ length: 5 }, () => crypto.randomUUID()),
};
const email = `outcomes-${ids.user.slice(0, 8)}@example.com`;

async function buildOldDatabase(database: Config['database']): Promise<void> {
  const handle = openDatabase(database);
  try {
    const migrations = migrationsFor(handle.kind);
    const names = Object.keys(migrations).sort();
    const target = names[names.findIndex((name) => name.startsWith('0011_')) - 1]!;
    const migrated = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo(target);
    if (migrated.error) throw migrated.error;
    // The schema before 0011, not today's Database type.
    const db = handle.db as unknown as Kysely<any>;
    await db
      .insertInto('users')
      .values({ id: ids.user, name: 'Owner', email, password_hash: await new PasswordHasher().hash(PASSWORD), email_verified_at: T0, created_at: T0, updated_at: T0 })
      .execute();
    const vapid = generateVapidKeys();
    await db
      .insertInto('sites')
      .values({
        id: ids.site,
        user_id: ids.user,
        name: 'Old Shop',
        url: 'https://old.example',
        icon: null,
        language: 'en',
        timezone: 'UTC',
        value_currency: 'USD',
        value_per_subscriber: 0,
        value_per_click: 0,
        vapid_public_key: vapid.publicKey,
        vapid_private_key: vapid.privateKey,
        active_subscriber_count: 3,
        created_at: T0,
        updated_at: T0,
      })
      .execute();
    await db
      .insertInto('subscribers')
      .values(
        ids.subscribers.map((id, i) => ({
          id,
          site_id: ids.site,
          endpoint: `https://fcm.googleapis.com/fcm/send/old-${i}`,
          endpoint_hash: crypto.createHash('sha256').update(`https://fcm.googleapis.com/fcm/send/old-${i}`).digest('hex'),
          ...pushKeys(),
          is_active: i < 3 ? 1 : 0,
          subscribed_at: T0,
          unsubscribed_at: i < 3 ? null : T0 + DAY,
          updated_at: T0,
        })),
      )
      .execute();
    await db
      .insertInto('notifications')
      .values({
        id: ids.notification,
        site_id: ids.site,
        type: 'ONE_TIME',
        source: 'dashboard',
        title: 'Old sale',
        message: 'From before 0011',
        destination_url: 'https://old.example/sale',
        status: 'completed',
        sent_at: T0 + DAY,
        completed_at: T0 + DAY,
        // As the old code counted: gone and "unsubscribed before sending" among the failed.
        total_count: 5,
        sent_count: 2,
        failed_count: 3,
        delivered_count: 1,
        clicked_count: 0,
        created_at: T0,
        updated_at: T0,
      })
      .execute();
    await db
      .insertInto('notification_runs')
      .values({
        id: ids.run,
        notification_id: ids.notification,
        site_id: ids.site,
        dedupe_key: `once:${ids.notification}`,
        status: 'completed',
        due_at: T0 + DAY,
        fanout_done: 1,
        total_count: 5,
        sent_count: 2,
        failed_count: 3,
        delivered_count: 1,
        clicked_count: 0,
        created_at: T0,
      })
      .execute();
    const delivery = (i: number, status: string, fields: Record<string, unknown> = {}) => ({
      run_id: ids.run,
      notification_id: ids.notification,
      site_id: ids.site,
      subscriber_id: ids.subscribers[i],
      status,
      attempts: 1,
      created_at: T0 + DAY,
      ...fields,
    });
    await db
      .insertInto('deliveries')
      .values([
        delivery(0, 'sent', { sent_at: T0 + DAY, delivered_at: T0 + 95 * DAY }),
        delivery(1, 'sent', { sent_at: T0 + DAY }),
        delivery(2, 'failed', { error: '503 (gave up after 5 attempts)' }),
        delivery(3, 'gone', { error: '410' }),
        delivery(4, 'gone', { error: 'Subscriber unsubscribed before sending' }),
      ])
      .execute();
  } finally {
    await handle.close();
  }
}

describe('migration 0011 on sends stored before it', () => {
  let t: TestApp;
  let token: string;
  const api = (method: string, url: string) => t.request(method, url, { token });

  beforeAll(async () => {
    t = await createTestApp({ prepareDatabase: buildOldDatabase, clock: new ManualClock(T0 + 100 * DAY) });
    token = (await t.request('POST', '/api/auth/login', { body: { email, password: PASSWORD } })).body.data.token;
  });
  afterAll(async () => t?.close());

  it('counts the old send in the outcome model: expired and skipped apart from failed, completed with errors', async () => {
    const { notification } = (await api('GET', `/api/notifications/${ids.notification}`)).body.data;
    expect(notification.status).toBe('completed_with_errors');
    expect(notification.counts).toEqual({ targeted: 5, sent: 2, failed: 1, expired: 1, skipped: 1, pending: 0, delivered: 1, clicked: 0 });
    const performance = (await api('GET', `/api/notifications/${ids.notification}/performance`)).body.data;
    expect(performance.runs[0]).toMatchObject({ status: 'completed_with_errors', counts: { failed: 1, expired: 1, skipped: 1 } });
    // Its reasons were never recorded: no group is invented.
    expect(performance.failures).toEqual([]);
    const rows = await t.ctx.db.selectFrom('deliveries').innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq').select(['subscribers.id as subscriber_id', 'status', 'reason']).where('run_seq', '=', runSeqOf(ids.run)).execute();
    const bySubscriber = new Map(rows.map((r) => [r.subscriber_id, r]));
    expect(bySubscriber.get(ids.subscribers[3]!)).toMatchObject({ status: 'gone', reason: 'gone' });
    expect(bySubscriber.get(ids.subscribers[4]!)).toMatchObject({ status: 'skipped', reason: 'inactive' });
  });

  it('gives subscribers their latest delivered beacon, so the stale clean-up spares the one that got something lately', async () => {
    const stale = (await api('GET', `/api/sites/${ids.site}/subscribers/stale`)).body.data;
    // Three active; the first had a delivery 5 days ago, the other two never.
    expect(stale).toMatchObject({ active: 3, stale: 2 });
  });
});
