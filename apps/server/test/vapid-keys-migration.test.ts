import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import { migrationsFor } from '../src/db/migrations';
import { generateVapidKeys } from '../src/delivery/vapid-keys';
import { createTestDatabase } from './support/test-database';

// Migration 0018 on a database of 0016 (docs/web-push.md, "RFC 8292: VAPID"):
// each site's key pair becomes its primary row of site_vapid_keys, stored as
// it was, and every subscriber points to its own site's key.

describe('migration 0018 on a database of 0016 with two sites and their subscribers', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const sites = [crypto.randomUUID(), crypto.randomUUID()];
  const keys = sites.map(() => generateVapidKeys());
  const subscribers = [0, 1, 2, 3, 4].map((i) => ({ id: crypto.randomUUID(), site: sites[i % 2]!, active: i !== 4 }));
  let dataDir: string;
  let handle: DatabaseHandle;
  let db: Kysely<any>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-0018-'));
    handle = openDatabase(await createTestDatabase(dataDir));
    db = handle.db as unknown as Kysely<any>;
    const migrations = migrationsFor(handle.kind);
    const migrated = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo('0016_subscriber_erasure');
    if (migrated.error) throw migrated.error;
    await db.insertInto('users').values({ id: user, name: 'Owner', email: `owner-0018-${user}@example.com`, password_hash: 'x', email_verified_at: T0, created_at: T0, updated_at: T0 }).execute();
    for (const [i, id] of sites.entries()) {
      await db
        .insertInto('sites')
        .values({
          id,
          user_id: user,
          name: `Shop ${i}`,
          url: `https://shop-${i}.example`,
          icon: null,
          language: 'en',
          timezone: 'UTC',
          value_currency: 'USD',
          value_per_subscriber: 0,
          value_per_click: 0,
          vapid_public_key: keys[i]!.publicKey,
          vapid_private_key: keys[i]!.privateKey,
          active_subscriber_count: 0,
          created_at: T0 + i,
          updated_at: T0 + i,
        })
        .execute();
    }
    for (const s of subscribers) {
      const endpoint = `https://fcm.googleapis.com/fcm/send/${s.id}`;
      await db
        .insertInto('subscribers')
        .values({
          id: s.id,
          site_id: s.site,
          endpoint,
          endpoint_hash: crypto.createHash('sha256').update(endpoint).digest('hex'),
          p256dh: 'p',
          auth: 'a',
          browser: null,
          os: null,
          country: null,
          language: null,
          timezone: null,
          user_agent: null,
          external_id: null,
          is_active: s.active ? 1 : 0,
          subscribed_at: T0,
          last_seen_at: null,
          last_delivered_at: null,
          unsubscribed_at: s.active ? null : T0,
          updated_at: T0,
        })
        .execute();
    }
  });
  afterAll(async () => {
    await handle?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('makes each site’s key pair its primary key, stored as it was, and points every subscriber to its site’s key', async () => {
    expect(await migrateToLatest(handle)).toContain('0018_site_vapid_keys');

    const rows = await db.selectFrom('site_vapid_keys').selectAll().orderBy('created_at').execute();
    expect(rows.map((r) => ({ site_id: r.site_id, public_key: r.public_key, private_key: r.private_key, is_primary: Number(r.is_primary), created_at: Number(r.created_at), retired_at: r.retired_at }))).toEqual(
      sites.map((id, i) => ({ site_id: id, public_key: keys[i]!.publicKey, private_key: keys[i]!.privateKey, is_primary: 1, created_at: T0 + i, retired_at: null })),
    );
    const keyOfSite = new Map(rows.map((r) => [r.site_id, r.id]));
    const moved = await db.selectFrom('subscribers').select(['id', 'site_id', 'vapid_key_id']).execute();
    expect(moved).toHaveLength(subscribers.length);
    for (const s of moved) expect(s.vapid_key_id, s.id).toBe(keyOfSite.get(s.site_id));

    // One primary per site, and a public key once per site: the database refuses a second.
    const second = { id: crypto.randomUUID(), site_id: sites[0], public_key: 'x', private_key: 'y', is_primary: 1, created_at: T0, retired_at: null };
    await expect(db.insertInto('site_vapid_keys').values(second).execute()).rejects.toThrow();
    await expect(db.insertInto('site_vapid_keys').values({ ...second, public_key: keys[0]!.publicKey, is_primary: 0 }).execute()).rejects.toThrow();
    await db.insertInto('site_vapid_keys').values({ ...second, is_primary: 0 }).execute();

    // Deleting a site takes its keys and subscribers with it.
    await db.deleteFrom('sites').where('id', '=', sites[1]!).execute();
    expect(await db.selectFrom('site_vapid_keys').select('id').where('site_id', '=', sites[1]!).execute()).toEqual([]);
    expect(await db.selectFrom('subscribers').select('id').where('site_id', '=', sites[1]!).execute()).toEqual([]);
  });
});
