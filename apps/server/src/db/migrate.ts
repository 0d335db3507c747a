import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { DatabaseHandle } from './database';
import { migrationsFor } from './migrations';
import type { Database } from './schema';

/**
 * Brings the schema up to date, once, however many processes start together
 * (README, "Upgrades"): the whole run holds a lock, and whoever gets it
 * second finds nothing left to do. On PostgreSQL the lock is a session-level
 * advisory lock on one connection; on SQLite, an exclusive transaction on a
 * lock file next to the database (both are let go if the process dies).
 * Migrations are forward-only: there is no `down`.
 */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  return withMigrationLock(handle, async (db) => {
    const { error, results } = await migratorFor(db, handle).migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error');
      throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  });
}

/** Migrations this version of Herald has that the database has not run yet, in order (`herald migrate --dry-run`, /readyz). */
export async function pendingMigrations(handle: Pick<DatabaseHandle, 'db' | 'kind'>): Promise<string[]> {
  const migrations = await migratorFor(handle.db, handle).getMigrations();
  return migrations.filter((m) => !m.executedAt).map((m) => m.name);
}

function migratorFor(db: Kysely<Database>, handle: Pick<DatabaseHandle, 'kind'>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrationsFor(handle.kind) } });
}

/** "herald-m" in ASCII: the advisory lock key no other application is likely to use. */
const POSTGRES_MIGRATION_LOCK = 0x68_65_72_61_6c_64_2d_6dn;
/** How long a second process waits for the first one's migrations. */
const LOCK_WAIT_MS = 10 * 60_000;

async function withMigrationLock<T>(handle: DatabaseHandle, run: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (handle.kind === 'postgres') {
    return handle.db.connection().execute(async (db) => {
      await sql`select pg_advisory_lock(${sql.lit(POSTGRES_MIGRATION_LOCK.toString())}::bigint)`.execute(db);
      try {
        return await run(db);
      } finally {
        await sql`select pg_advisory_unlock(${sql.lit(POSTGRES_MIGRATION_LOCK.toString())}::bigint)`.execute(db).catch(() => undefined);
      }
    });
  }
  const lock = new SQLite(`${handle.file}.migrate-lock`);
  try {
    lock.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    lock.exec('BEGIN EXCLUSIVE');
    try {
      return await run(handle.db);
    } finally {
      lock.exec('COMMIT');
    }
  } finally {
    lock.close();
  }
}
