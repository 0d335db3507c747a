import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import { migrationsFor } from '../src/db/migrations';
import { generateVapidKeys } from '../src/delivery/vapid-keys';
import { auditLogRetentionSource } from '../src/features/audit-log/service';
import { ManualClock } from '../src/platform/clock';
import { addMember } from './security/support/fixtures';
import { createTestDatabase } from './support/test-database';
import { createTestApp, type TestApp } from './support/test-app';

// The audit log outlives its site (docs/security.md, "Audit log"): entries
// are never changed or deleted by the API and are kept
// AUDIT_LOG_RETENTION_DAYS. Migration 0014 made audit_log.site_id cascade
// from sites, so deleting a site wiped its log; 0015 drops that foreign key
// (SQLite: a table rebuild) and the deletion itself is an entry.

const DAY = 86_400_000;

describe('the audit log of a deleted site', () => {
  const clock = new ManualClock(Date.UTC(2026, 4, 4, 8));
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  const entriesOf = (siteId: string) =>
    t.ctx.db.selectFrom('audit_log').select(['action', 'subject_type', 'subject_id', 'subject_label', 'actor_id']).where('site_id', '=', siteId).orderBy('created_at').orderBy('id').execute();

  it('keeps every entry, the deletion included, while the API answers 404 for the site and its log', async () => {
    const owner = await t.createUser({ name: 'Olga Owner' });
    const site = await t.createSite(owner.token, { name: 'Closing Shop' });
    clock.advance(1000);
    const admin = await addMember(t, { site, user: owner }, 'admin');
    clock.advance(1000);
    expect((await t.request('PATCH', `/api/sites/${site.id}`, { token: admin.token, body: { name: 'Closing Shop!' } })).status).toBe(200);
    clock.advance(1000);
    const before = await entriesOf(site.id);
    expect(before.map((e) => e.action)).toEqual(['created', 'member_invited', 'member_joined', 'settings_changed']);

    expect((await t.request('DELETE', `/api/sites/${site.id}`, { token: owner.token })).status).toBe(200);
    expect(await t.ctx.db.selectFrom('sites').select('id').where('id', '=', site.id).executeTakeFirst()).toBeUndefined();

    const after = await entriesOf(site.id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([{ action: 'deleted', subject_type: 'site', subject_id: site.id, subject_label: 'Closing Shop!', actor_id: owner.id }]);

    // Nobody is a member any more: the log is not readable through the API, the same 404 as for a site that never was.
    for (const token of [owner.token, admin.token]) {
      for (const url of [`/api/sites/${site.id}/audit-log`, `/api/sites/${site.id}/audit-log/export`]) {
        const answer = await t.request('GET', url, { token });
        expect(answer.status, url).toBe(404);
        expect(answer.body).toEqual({ success: false, error: { message: 'Site not found', code: 'not_found' } });
      }
    }
  });

  it('is purged by the retention sweep like any other log, and only then', async () => {
    const owner = await t.createUser();
    const site = await t.createSite(owner.token, { name: 'Gone' });
    expect((await t.request('DELETE', `/api/sites/${site.id}`, { token: owner.token })).status).toBe(200);
    const sweep = auditLogRetentionSource(t.ctx, { everyMs: 0, batchSize: 100, maxBatches: 10 });
    clock.advance(364 * DAY);
    await sweep.runDue(clock.now());
    expect((await entriesOf(site.id)).map((e) => e.action)).toEqual(['created', 'deleted']);
    clock.advance(2 * DAY);
    await sweep.runDue(clock.now());
    expect(await entriesOf(site.id)).toEqual([]);
  });
});

describe('migration 0015 on a database of 0014 with an audit log', () => {
  const T0 = Date.UTC(2026, 3, 1, 9);
  const ids = { user: crypto.randomUUID(), site: crypto.randomUUID() };
  let dataDir: string;
  let handle: DatabaseHandle;
  // The schema as the migrations make it, not today's Database type.
  let db: Kysely<any>;

  const entry = (i: number) => ({
    id: `${(T0 + i).toString(36).padStart(9, '0')}000${i}${'ab'.repeat(6)}`,
    site_id: ids.site,
    created_at: T0 + i,
    actor_type: 'user',
    actor_id: ids.user,
    actor_label: 'Owner <owner@example.com>',
    action: i === 0 ? 'created' : 'updated',
    subject_type: i === 0 ? 'site' : 'notification',
    subject_id: i === 0 ? ids.site : `n-${i}`,
    subject_label: i === 2 ? null : `Subject ${i}`,
    changed_fields: i === 0 ? '[]' : '["title"]',
    detail: i === 1 ? '{"audience":"all"}' : '{}',
    address: i === 2 ? null : '203.0.113.7',
  });
  const entries = [0, 1, 2, 3].map(entry);

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-0015-'));
    handle = openDatabase(await createTestDatabase(dataDir));
    db = handle.db as unknown as Kysely<any>;
    const migrations = migrationsFor(handle.kind);
    const migrated = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo('0014_teams');
    if (migrated.error) throw migrated.error;
    await db.insertInto('users').values({ id: ids.user, name: 'Owner', email: 'owner-0015@example.com', password_hash: 'x', email_verified_at: T0, created_at: T0, updated_at: T0 }).execute();
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
        active_subscriber_count: 0,
        created_at: T0,
        updated_at: T0,
      })
      .execute();
    await db.insertInto('audit_log').values(entries).execute();
  });
  afterAll(async () => {
    await handle?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function foreignKeysOfAuditLog(): Promise<string[]> {
    if (handle.kind === 'postgres') {
      const { rows } = await sql<{ name: string }>`select conname as name from pg_constraint where conrelid = 'audit_log'::regclass and contype = 'f'`.execute(db);
      return rows.map((r) => r.name);
    }
    const { rows } = await sql<{ table: string }>`select "table" from pragma_foreign_key_list('audit_log')`.execute(db);
    return rows.map((r) => r.table);
  }

  async function indexesOfAuditLog(): Promise<Record<string, string[]>> {
    const names = ['audit_log_site_time', 'audit_log_created_at'];
    const result: Record<string, string[]> = {};
    for (const name of names) {
      if (handle.kind === 'postgres') {
        const { rows } = await sql<{ column: string }>`
          select a.attname as "column" from pg_index i
          join pg_class c on c.oid = i.indexrelid
          join unnest(i.indkey) with ordinality as k(attnum, position) on true
          join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
          where c.relname = ${name} and i.indrelid = 'audit_log'::regclass
          order by k.position`.execute(db);
        result[name] = rows.map((r) => r.column);
      } else {
        const { rows } = await sql<{ name: string }>`select name from pragma_index_info(${name})`.execute(db);
        result[name] = rows.map((r) => r.name);
      }
    }
    return result;
  }

  const allEntries = () => db.selectFrom('audit_log').selectAll().orderBy('created_at').execute();

  it('drops the foreign key to sites, keeps every row and both indexes, and deleting the site then keeps its log', async () => {
    expect(await foreignKeysOfAuditLog()).toHaveLength(1);
    const indexes = { audit_log_site_time: ['site_id', 'created_at', 'id'], audit_log_created_at: ['created_at'] };
    expect(await indexesOfAuditLog()).toEqual(indexes);

    expect(await migrateToLatest(handle)).toContain('0015_audit_log_outlives_site');

    expect(await foreignKeysOfAuditLog()).toEqual([]);
    expect(await indexesOfAuditLog()).toEqual(indexes);
    expect(await allEntries()).toEqual(entries);
    // Still the primary key it was.
    await expect(db.insertInto('audit_log').values(entries[0]!).execute()).rejects.toThrow();

    await db.deleteFrom('sites').where('id', '=', ids.site).execute();
    expect(await allEntries()).toEqual(entries);
  });
});
