// A database stopped at an earlier migration, with the rows every migration
// test starts from (an owner and a site, in the columns every version since
// 0001 has), so a test of migration N only writes what N is about.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { openDatabase, type DatabaseHandle } from '../../src/db/database';
import { migrationsFor } from '../../src/db/migrations';
import { generateVapidKeys } from '../../src/delivery/vapid-keys';
import { createTestDatabase } from './test-database';

export interface OldDatabase {
  handle: DatabaseHandle;
  /** Untyped: the schema of an earlier version is not the current one. */
  db: Kysely<any>;
  close(): Promise<void>;
}

/** A throwaway database (SQLite, or PostgreSQL with HERALD_TEST_DB=postgres) migrated up to and including `migration`. */
export async function openDatabaseAt(migration: string): Promise<OldDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `herald-${migration.slice(0, 4)}-`));
  const handle = openDatabase(await createTestDatabase(dataDir));
  const migrations = migrationsFor(handle.kind);
  const migrated = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo(migration);
  if (migrated.error) throw migrated.error;
  return {
    handle,
    db: handle.db as unknown as Kysely<any>,
    async close() {
      await handle.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An owner and one site of theirs, as the oldest schema knows them; returns the site's key pair. */
export async function insertOwnerAndSite(db: Kysely<any>, ids: { user: string; site: string }, at: number): Promise<{ publicKey: string; privateKey: string }> {
  const keys = generateVapidKeys();
  await db.insertInto('users').values({ id: ids.user, name: 'Owner', email: `owner-${ids.user}@example.com`, password_hash: 'x', email_verified_at: at, created_at: at, updated_at: at }).execute();
  await db
    .insertInto('sites')
    .values({
      id: ids.site,
      user_id: ids.user,
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
      created_at: at,
      updated_at: at,
    })
    .execute();
  return keys;
}

/** A one-time notification of the site and its run, in a given state, as every schema since 0019 knows them. */
export async function insertOneTimeSend(
  db: Kysely<any>,
  ids: { site: string; notification: string; run: string },
  status: { notification: string; run: string },
  at: number,
): Promise<void> {
  await db
    .insertInto('notifications')
    .values({ id: ids.notification, site_id: ids.site, type: 'ONE_TIME', source: 'dashboard', title: 'T', message: 'M', destination_url: 'https://shop.example/', status: status.notification, created_at: at, updated_at: at })
    .execute();
  await db
    .insertInto('notification_runs')
    .values({ id: ids.run, notification_id: ids.notification, site_id: ids.site, dedupe_key: `once:${ids.notification}`, status: status.run, due_at: at, created_at: at })
    .execute();
}

/** The names of a table's indexes, as the database lists them. */
export async function indexesOf(old: OldDatabase, table: string): Promise<string[]> {
  const rows =
    old.handle.kind === 'postgres'
      ? await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE tablename = ${table}`.execute(old.db)
      : await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ${table}`.execute(old.db);
  return rows.rows.map((row) => row.name);
}

/** An index's definition as the database keeps it (PostgreSQL's indexdef, SQLite's CREATE INDEX text); '' when there is none. */
export async function indexDefinitionOf(old: OldDatabase, name: string): Promise<string> {
  const rows =
    old.handle.kind === 'postgres'
      ? await sql<{ definition: string }>`SELECT indexdef AS definition FROM pg_indexes WHERE indexname = ${name}`.execute(old.db)
      : await sql<{ definition: string }>`SELECT sql AS definition FROM sqlite_master WHERE type = 'index' AND name = ${name}`.execute(old.db);
  return rows.rows[0]?.definition ?? '';
}
