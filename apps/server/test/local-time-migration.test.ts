import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';

// Migration 0025 on a database of 0023 (docs/delivery.md, "Local-time
// delivery" and "Quiet hours"): existing notifications keep going at once and
// are not exempt, their runs reach every subscriber (no zones), and no site
// has quiet hours.
describe('migration 0025 on a database of 0023 with a scheduled notification', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  const notification = crypto.randomUUID();
  const run = crypto.randomUUID();
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0023_frequency_cap');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    await insertOneTimeSend(db, { site, notification, run }, { notification: 'scheduled', run: 'pending' }, T0);
  });
  afterAll(async () => old?.close());

  it('adds the columns with the values every send had until now', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0025_local_time_and_quiet_hours');
    expect(await db.selectFrom('notifications').select(['delivery_mode', 'local_time', 'quiet_hours_exempt', 'quiet_hours_deferred_count']).where('id', '=', notification).executeTakeFirst()).toEqual({
      delivery_mode: 'at_once',
      local_time: null,
      quiet_hours_exempt: 0,
      quiet_hours_deferred_count: 0,
    });
    expect(await db.selectFrom('notification_runs').select(['zones', 'zone_send_id', 'status']).where('id', '=', run).executeTakeFirst()).toEqual({ zones: null, zone_send_id: null, status: 'pending' });
    expect(await db.selectFrom('sites').select(['quiet_hours_start', 'quiet_hours_end']).where('id', '=', site).executeTakeFirst()).toEqual({ quiet_hours_start: null, quiet_hours_end: null });
  });
});
