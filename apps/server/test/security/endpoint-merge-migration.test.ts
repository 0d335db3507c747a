import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import { migrationsFor } from '../../src/db/migrations';
import { generateVapidKeys } from '../../src/delivery/vapid-keys';
import { PasswordHasher } from '../../src/platform/passwords';
import { createTestApp, type TestApp } from '../support/test-app';
import { nextAddress, pushKeys } from './support/fixtures';

// Issue 10 items 7 and 3, for data stored before the fix: migration 0009
// rewrites every endpoint in normal form and merges the subscribers that were
// one browser into the oldest of them (docs/security.md, "One device, one
// subscriber"); sites that existed keep identity verification off until their
// owner turns it on, and get their identity secret when first asked.
//
// The rows are written as the code before 0009 wrote them (endpoint stored as
// the browser spelt it, endpoint_hash = sha256 of that text) into a database
// migrated up to the migration before 0009; then Herald opens it, migrates,
// and the result is read through the API.

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 9);
const PASSWORD = 'correct horse battery staple';
const DEVICE = 'fcm/send/ZGV2aWNlLXg:APA91bXyZ';
const DEVICE_ENDPOINT = `https://fcm.googleapis.com/${DEVICE}`;

const ids = {
  user: crypto.randomUUID(),
  site: crypto.randomUUID(),
  otherSite: crypto.randomUUID(),
  // One browser under four spellings; a0 is the oldest.
  a0: crypto.randomUUID(),
  a1: crypto.randomUUID(),
  a2: crypto.randomUUID(),
  a3: crypto.randomUUID(),
  /** Alone, but spelt with a fragment: rewritten, not merged. */
  b0: crypto.randomUUID(),
  /** Alone and normal already: untouched. */
  c0: crypto.randomUUID(),
  /** The same browser on another site: another subscriber, never merged across sites. */
  d0: crypto.randomUUID(),
  sentNotification: crypto.randomUUID(),
  sentRun: crypto.randomUUID(),
  laterNotification: crypto.randomUUID(),
  laterRun: crypto.randomUUID(),
  triggered: crypto.randomUUID(),
  triggerRunKeeper: crypto.randomUUID(),
  triggerRunDuplicate: crypto.randomUUID(),
  dripNotification: crypto.randomUUID(),
  dripRun: crypto.randomUUID(),
  campaign: crypto.randomUUID(),
  event: crypto.randomUUID(),
};
const email = `old-owner-${ids.user.slice(0, 8)}@example.com`;
const keysOf = { a0: pushKeys(), a1: pushKeys(), a2: pushKeys(), a3: pushKeys() };

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** A subscriber row as the code before migration 0009 stored it. */
function oldSubscriber(id: string, siteId: string, endpoint: string, at: number, fields: Record<string, unknown> = {}) {
  const keys = pushKeys();
  return {
    id,
    site_id: siteId,
    endpoint,
    endpoint_hash: sha256(endpoint),
    p256dh: keys.p256dh,
    auth: keys.auth,
    browser: 'Chrome',
    os: 'Windows',
    country: 'DE',
    language: 'de-DE',
    timezone: 'Europe/Berlin',
    user_agent: 'Mozilla/5.0',
    external_id: null,
    is_active: 1,
    subscribed_at: at,
    last_seen_at: at,
    unsubscribed_at: null,
    updated_at: at,
    ...fields,
  };
}

const run = (id: string, notificationId: string, status: string, subscriberId: string | null) => ({
  id,
  notification_id: notificationId,
  site_id: ids.site,
  dedupe_key: `test:${id}`,
  status,
  due_at: T0 + 10 * HOUR,
  subscriber_id: subscriberId,
  created_at: T0,
});

const delivery = (runId: string, notificationId: string, subscriberId: string) => ({
  run_id: runId,
  notification_id: notificationId,
  site_id: ids.site,
  subscriber_id: subscriberId,
  status: 'sent',
  attempts: 1,
  sent_at: T0 + 4 * HOUR,
  created_at: T0 + 4 * HOUR,
});

const notification = (id: string, type: string, status: string) => ({
  id,
  site_id: ids.site,
  type,
  source: 'manual',
  title: 'Old news',
  message: 'From before the migration',
  destination_url: 'https://old.example/news',
  status,
  created_at: T0,
  updated_at: T0,
});

/** Builds the schema as it was before 0009 and writes the rows the old code wrote. */
async function buildOldDatabase(database: Config['database']): Promise<void> {
  const handle = openDatabase(database);
  try {
    const migrations = migrationsFor(handle.kind);
    const names = Object.keys(migrations).sort();
    const target = names[names.findIndex((name) => name.startsWith('0009_')) - 1]!;
    const migrated = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo(target);
    if (migrated.error) throw migrated.error;

    // The schema before 0009, not today's Database type.
    const db = handle.db as unknown as Kysely<any>;
    await db
      .insertInto('users')
      .values({ id: ids.user, name: 'Old Owner', email, password_hash: await new PasswordHasher().hash(PASSWORD), email_verified_at: T0, created_at: T0, updated_at: T0 })
      .execute();
    for (const [id, name, count] of [
      [ids.site, 'Old Shop', 5],
      [ids.otherSite, 'Old Blog', 1],
    ] as const) {
      const vapid = generateVapidKeys();
      await db
        .insertInto('sites')
        .values({
          id,
          user_id: ids.user,
          name,
          url: 'https://old.example',
          icon: null,
          language: 'en',
          timezone: 'UTC',
          value_currency: 'USD',
          value_per_subscriber: 0,
          value_per_click: 0,
          vapid_public_key: vapid.publicKey,
          vapid_private_key: vapid.privateKey,
          // As the old code counted: every spelling of the browser that was active.
          active_subscriber_count: count,
          created_at: T0,
          updated_at: T0,
        })
        .execute();
    }

    await db
      .insertInto('subscribers')
      .values([
        oldSubscriber(ids.a0, ids.site, `https://FCM.googleapis.com:443/${DEVICE}`, T0, {
          ...keysOf.a0,
          is_active: 0,
          unsubscribed_at: T0 + 5 * HOUR,
          updated_at: T0 + 5 * HOUR,
          external_id: 'customer-1',
        }),
        oldSubscriber(ids.a1, ids.site, `${DEVICE_ENDPOINT}#fragment`, T0 + HOUR, keysOf.a1),
        // The most recently updated spelling holds the browser's current keys.
        oldSubscriber(ids.a2, ids.site, DEVICE_ENDPOINT, T0 + 2 * HOUR, { ...keysOf.a2, browser: 'Firefox', os: 'Linux', updated_at: T0 + 9 * HOUR, last_seen_at: T0 + 9 * HOUR }),
        oldSubscriber(ids.a3, ids.site, `https://fcm.googleapis.com/fcm/x/../${DEVICE.slice('fcm/'.length)}`, T0 + 3 * HOUR, keysOf.a3),
        oldSubscriber(ids.b0, ids.site, 'https://fcm.googleapis.com/fcm/send/YWxvbmU:APA91b#only', T0 + 4 * HOUR),
        oldSubscriber(ids.c0, ids.site, 'https://fcm.googleapis.com/fcm/send/bm9ybWFs:APA91b', T0 + 4 * HOUR),
        oldSubscriber(ids.d0, ids.otherSite, `${DEVICE_ENDPOINT}#fragment`, T0 + 4 * HOUR),
      ])
      .execute();
    await db
      .insertInto('subscriber_tags')
      .values([
        { subscriber_id: ids.a0, site_id: ids.site, tag: 'vip' },
        { subscriber_id: ids.a1, site_id: ids.site, tag: 'news' },
        { subscriber_id: ids.a2, site_id: ids.site, tag: 'news' },
        { subscriber_id: ids.a2, site_id: ids.site, tag: 'sale' },
      ])
      .execute();

    await db
      .insertInto('notifications')
      .values([
        notification(ids.sentNotification, 'ONE_TIME', 'completed'),
        notification(ids.laterNotification, 'ONE_TIME', 'completed'),
        notification(ids.triggered, 'TRIGGERED', 'active'),
        notification(ids.dripNotification, 'ONE_TIME', 'draft'),
      ])
      .execute();
    await db
      .insertInto('notification_runs')
      .values([
        run(ids.sentRun, ids.sentNotification, 'completed', null),
        run(ids.laterRun, ids.laterNotification, 'completed', null),
        // The same trigger fired for two spellings: the browser would get it twice.
        run(ids.triggerRunKeeper, ids.triggered, 'pending', ids.a0),
        run(ids.triggerRunDuplicate, ids.triggered, 'pending', ids.a1),
        // A pending send only a merged-away spelling had: it now goes to the keeper.
        run(ids.dripRun, ids.dripNotification, 'pending', ids.a2),
      ])
      .execute();
    await db
      .insertInto('deliveries')
      .values([
        // One send reached the browser three times (the bug); the keeper's copy stays its own.
        delivery(ids.sentRun, ids.sentNotification, ids.a0),
        delivery(ids.sentRun, ids.sentNotification, ids.a1),
        delivery(ids.sentRun, ids.sentNotification, ids.a2),
        delivery(ids.laterRun, ids.laterNotification, ids.a3),
      ])
      .execute();
    await db.insertInto('welcome_campaigns').values({ id: ids.campaign, site_id: ids.site, name: 'Welcome', is_active: 1, steps_version: 1, created_at: T0, updated_at: T0 }).execute();
    await db
      .insertInto('welcome_campaign_enrollments')
      .values([
        { id: crypto.randomUUID(), campaign_id: ids.campaign, site_id: ids.site, subscriber_id: ids.a1, steps_version: 1, enrolled_at: T0 + HOUR },
        { id: crypto.randomUUID(), campaign_id: ids.campaign, site_id: ids.site, subscriber_id: ids.a2, steps_version: 1, enrolled_at: T0 + 2 * HOUR },
      ])
      .execute();
    await db
      .insertInto('site_events')
      .values({ id: ids.event, site_id: ids.site, name: 'viewed', source: 'browser', subscriber_id: ids.a3, subscriber_count: 1, triggered_count: 0, received_at: T0 + 6 * HOUR })
      .execute();
  } finally {
    await handle.close();
  }
}

describe('migration 0009 on data stored before it', () => {
  let t: TestApp;
  let token: string;
  const api = (method: string, url: string, body?: unknown) => t.request(method, url, { token, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    t = await createTestApp({ prepareDatabase: buildOldDatabase });
    const login = await t.request('POST', '/api/auth/login', { body: { email, password: PASSWORD } });
    expect(login.status).toBe(200);
    token = login.body.data.token;
  });
  afterAll(async () => t?.close());

  it('merges the spellings of one browser into the oldest subscriber, and the counts are true', async () => {
    const listed = await api('GET', `/api/sites/${ids.site}/subscribers?limit=200`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.subscribers.map((s: { id: string }) => s.id).sort()).toEqual([ids.a0, ids.b0, ids.c0].sort());

    const keeper = (await api('GET', `/api/sites/${ids.site}/subscribers/${ids.a0}`)).body.data.subscriber;
    expect(keeper).toMatchObject({ id: ids.a0, is_active: true, unsubscribed_at: null, browser: 'Firefox', os: 'Linux', tags: ['news', 'sale', 'vip'] });
    expect(keeper.subscribed_at).toBe(new Date(T0).toISOString());
    expect(keeper.last_seen_at).toBe(new Date(T0 + 9 * HOUR).toISOString());

    const rows = await t.ctx.db.selectFrom('subscribers').selectAll().where('site_id', '=', ids.site).orderBy('subscribed_at').execute();
    const keeperRow = rows.find((r) => r.id === ids.a0)!;
    expect(keeperRow).toMatchObject({ endpoint: DEVICE_ENDPOINT, endpoint_hash: sha256(DEVICE_ENDPOINT), ...keysOf.a2, external_id: 'customer-1', external_id_verified: 0 });
    expect(rows.find((r) => r.id === ids.b0)).toMatchObject({ endpoint: 'https://fcm.googleapis.com/fcm/send/YWxvbmU:APA91b', endpoint_hash: sha256('https://fcm.googleapis.com/fcm/send/YWxvbmU:APA91b') });
    for (const row of rows) expect(row.endpoint_hash).toBe(sha256(row.endpoint));

    // sites.active_subscriber_count equals the active rows after the merge (it was 5: one browser counted thrice).
    const site = (await api('GET', `/api/sites/${ids.site}`)).body.data.site;
    expect(site.subscriber_count).toBe(rows.filter((r) => r.is_active === 1).length);
    expect(site.subscriber_count).toBe(3);

    // Never across sites: the same browser on the other site stays that site's one subscriber.
    const other = await t.ctx.db.selectFrom('subscribers').select(['id', 'endpoint']).where('site_id', '=', ids.otherSite).execute();
    expect(other).toEqual([{ id: ids.d0, endpoint: DEVICE_ENDPOINT }]);
    expect((await api('GET', `/api/sites/${ids.otherSite}`)).body.data.site.subscriber_count).toBe(1);
  });

  it('moves what pointed at the merged rows, without sending the browser anything twice', async () => {
    const runs = await t.ctx.db.selectFrom('notification_runs').select(['id', 'status', 'subscriber_id', 'last_error']).where('site_id', '=', ids.site).execute();
    const byId = new Map(runs.map((r) => [r.id, r]));
    expect(byId.get(ids.triggerRunKeeper)).toMatchObject({ status: 'pending', subscriber_id: ids.a0 });
    expect(byId.get(ids.triggerRunDuplicate)).toMatchObject({ status: 'cancelled', subscriber_id: ids.a0, last_error: 'Merged into the subscriber of the same browser' });
    expect(byId.get(ids.dripRun)).toMatchObject({ status: 'pending', subscriber_id: ids.a0 });

    const deliveries = await t.ctx.db
      .selectFrom('deliveries')
      .innerJoin('notification_runs', 'notification_runs.seq', 'deliveries.run_seq')
      // A merged subscriber's row stays as history under a number no subscriber has (migration 0036): no id.
      .leftJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq')
      .select(['notification_runs.id as run_id', 'subscribers.id as subscriber_id', 'deliveries.subscriber_seq'])
      .where('notification_runs.site_id', '=', ids.site)
      .execute();
    // The later send moved over; of the triple send, the keeper keeps its own and the others stay as recorded history.
    expect(deliveries.filter((d) => d.run_id === ids.laterRun)).toMatchObject([{ run_id: ids.laterRun, subscriber_id: ids.a0 }]);
    expect(deliveries.filter((d) => d.run_id === ids.sentRun && d.subscriber_id === ids.a0)).toHaveLength(1);
    expect(deliveries.filter((d) => d.run_id === ids.sentRun)).toHaveLength(3);
    // Each merged subscriber's row under a number of its own, which no subscriber has (migration 0036).
    const history = deliveries.filter((d) => d.run_id === ids.sentRun && d.subscriber_id === null);
    expect(new Set(history.map((d) => Number(d.subscriber_seq))).size).toBe(2);
    const numbers = (await t.ctx.db.selectFrom('subscribers').select('seq').execute()).map((row) => Number(row.seq));
    expect(history.every((d) => Number(d.subscriber_seq) > Math.max(...numbers))).toBe(true);

    const enrollments = await t.ctx.db.selectFrom('welcome_campaign_enrollments').select(['subscriber_id', 'enrolled_at']).where('campaign_id', '=', ids.campaign).execute();
    expect(enrollments).toEqual([{ subscriber_id: ids.a0, enrolled_at: T0 + HOUR }]);

    const [event] = (await api('GET', `/api/sites/${ids.site}/events`)).body.data.events;
    expect(event).toMatchObject({ id: ids.event, subscriber_id: ids.a0 });
  });

  it('finds the merged subscriber under every old spelling from now on', async () => {
    for (const endpoint of [`https://FCM.googleapis.com:443/${DEVICE}`, `${DEVICE_ENDPOINT}#fragment`, DEVICE_ENDPOINT]) {
      const again = await t.request('POST', `/api/public/sites/${ids.site}/subscribers`, { body: { subscription: { endpoint, keys: pushKeys() } }, remoteAddress: nextAddress() });
      expect(again.status, endpoint).toBe(200);
      expect(again.body.data.subscriber.id).toBe(ids.a0);
    }
    expect((await api('GET', `/api/sites/${ids.site}`)).body.data.site.subscriber_count).toBe(3);
  });

  it('leaves identity verification off on sites that existed, and gives them a secret when first asked', async () => {
    const site = (await api('GET', `/api/sites/${ids.site}`)).body.data.site;
    expect(site.settings).toMatchObject({ identityVerification: false, serverOnlyTags: [] });
    const stored = await t.ctx.db.selectFrom('sites').select('identity_secret').where('id', '=', ids.site).executeTakeFirstOrThrow();
    expect(stored.identity_secret).toBeNull();

    // Their pages keep working: unsigned claims are accepted until the owner turns verification on.
    const identified = await t.request('POST', `/api/public/sites/${ids.site}/identify`, { body: { endpoint: DEVICE_ENDPOINT, external_id: 'customer-1' }, remoteAddress: nextAddress() });
    expect(identified.status).toBe(200);
    expect(identified.body.data.subscriber).toEqual({ id: ids.a0, external_id: 'customer-1', verified: false });

    const first = await api('GET', `/api/sites/${ids.site}/identity-secret`);
    expect(first.body.data.secret).toMatch(/^[0-9a-f]{64}$/);
    expect((await api('GET', `/api/sites/${ids.site}/identity-secret`)).body.data.secret).toBe(first.body.data.secret);

    // Turning verification on for a site that never asked for its secret creates one, so signed claims can work.
    const turnedOn = await api('PATCH', `/api/sites/${ids.otherSite}`, { settings: { identityVerification: true } });
    expect(turnedOn.body.data.site.settings.identityVerification).toBe(true);
    const otherSecret = await t.ctx.db.selectFrom('sites').select('identity_secret').where('id', '=', ids.otherSite).executeTakeFirstOrThrow();
    expect(otherSecret.identity_secret).toMatch(/^[0-9a-f]{64}$/);
  });
});
