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

// Migration 0019 on a database of 0018 (docs/delivery.md, "Runs that follow
// another run"): the pending steps of each existing enrolment name the step
// before them, so an upgrade keeps them in order; other runs name none.

describe('migration 0019 on a database of 0018 with two enrolments in progress', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  const notification = crypto.randomUUID();
  const subscriber = crypto.randomUUID();
  const enrolments = [crypto.randomUUID(), crypto.randomUUID()];
  /** Enrolment 0: step 1 sent, steps 2 and 3 pending. Enrolment 1: all three pending. Plus a one-time run. */
  const runs = [
    { id: crypto.randomUUID(), key: `drip:${enrolments[0]}:01:a`, status: 'completed' },
    { id: crypto.randomUUID(), key: `drip:${enrolments[0]}:02:b`, status: 'pending' },
    { id: crypto.randomUUID(), key: `drip:${enrolments[0]}:03:c`, status: 'pending' },
    { id: crypto.randomUUID(), key: `drip:${enrolments[1]}:01:a`, status: 'pending' },
    { id: crypto.randomUUID(), key: `drip:${enrolments[1]}:02:b`, status: 'pending' },
    { id: crypto.randomUUID(), key: `drip:${enrolments[1]}:03:c`, status: 'pending' },
    { id: crypto.randomUUID(), key: `once:${notification}`, status: 'pending' },
  ];
  let dataDir: string;
  let handle: DatabaseHandle;
  let db: Kysely<any>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-0019-'));
    handle = openDatabase(await createTestDatabase(dataDir));
    db = handle.db as unknown as Kysely<any>;
    const migrations = migrationsFor(handle.kind);
    const migrated = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo('0018_site_vapid_keys');
    if (migrated.error) throw migrated.error;
    const keys = generateVapidKeys();
    await db.insertInto('users').values({ id: user, name: 'Owner', email: `owner-0019-${user}@example.com`, password_hash: 'x', email_verified_at: T0, created_at: T0, updated_at: T0 }).execute();
    await db
      .insertInto('sites')
      .values({
        id: site,
        user_id: user,
        name: 'Shop',
        url: 'https://shop.example',
        icon: null,
        language: 'en',
        timezone: 'UTC',
        value_currency: 'USD',
        value_per_subscriber: 0,
        value_per_click: 0,
        vapid_public_key: keys.publicKey,
        vapid_private_key: keys.privateKey,
        active_subscriber_count: 0,
        created_at: T0,
        updated_at: T0,
      })
      .execute();
    await db
      .insertInto('notifications')
      .values({ id: notification, site_id: site, type: 'one_time', source: 'dashboard', title: 'T', message: 'M', destination_url: 'https://shop.example/', status: 'scheduled', created_at: T0, updated_at: T0 })
      .execute();
    for (const [i, run] of runs.entries()) {
      await db
        .insertInto('notification_runs')
        .values({
          id: run.id,
          notification_id: notification,
          site_id: site,
          dedupe_key: run.key,
          status: run.status,
          due_at: T0 + i,
          subscriber_id: run.key.startsWith('drip:') ? subscriber : null,
          created_at: T0,
        })
        .execute();
    }
  });
  afterAll(async () => {
    await handle?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('links each pending step to the step before it in its own enrolment, and nothing else', async () => {
    expect(await migrateToLatest(handle)).toContain('0019_run_order');
    const after = new Map((await db.selectFrom('notification_runs').select(['id', 'after_run_id']).execute()).map((row) => [row.id, row.after_run_id]));
    expect(runs.map((run) => after.get(run.id))).toEqual([null, runs[0]!.id, runs[1]!.id, null, runs[3]!.id, runs[4]!.id, null]);
  });
});
