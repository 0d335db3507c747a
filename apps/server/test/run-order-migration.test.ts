import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';

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
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0018_site_vapid_keys');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
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
  afterAll(async () => old?.close());

  it('links each pending step to the step before it in its own enrolment, and nothing else', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0019_run_order');
    const after = new Map((await db.selectFrom('notification_runs').select(['id', 'after_run_id']).execute()).map((row) => [row.id, row.after_run_id]));
    expect(runs.map((run) => after.get(run.id))).toEqual([null, runs[0]!.id, runs[1]!.id, null, runs[3]!.id, runs[4]!.id, null]);
  });
});
