// SQL of the System checks (`herald doctor`): secret fingerprints, the
// database's own clock, the install's owner and what the VAPID check reads.
import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database } from '../../db/schema';

type Db = Kysely<Database>;

/** Notes that a process uses the secret with this fingerprint now. */
export async function recordSecretFingerprint(db: Db, fingerprint: string, now: number): Promise<void> {
  await db
    .insertInto('secret_fingerprints')
    .values({ fingerprint, first_seen_at: now, last_seen_at: now })
    .onConflict((oc) => oc.column('fingerprint').doUpdateSet({ last_seen_at: now }))
    .execute();
}

/** Fingerprints some process used since `since`. */
export async function secretFingerprintsSeenSince(db: Db, since: number): Promise<string[]> {
  const rows = await db.selectFrom('secret_fingerprints').select('fingerprint').where('last_seen_at', '>=', since).orderBy('fingerprint').execute();
  return rows.map((r) => r.fingerprint);
}

export async function selectOne(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** The database server's clock in epoch milliseconds (PostgreSQL); SQLite runs in this process and has none of its own. */
export async function databaseClock(db: Db, kind: DatabaseKind): Promise<number | undefined> {
  if (kind !== 'postgres') return undefined;
  const { rows } = await sql<{ now: number }>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as now`.execute(db);
  return Number(rows[0]!.now);
}

/** The install's owner: the first account, made from ADMIN_EMAIL or the setup link (bootstrap.ts). */
export async function installOwnerId(db: Db): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('id').orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  return row?.id;
}

/** Every site with what its VAPID subject is made of (its URL, its owner's email). */
export function sitesWithOwnerEmail(db: Db): Promise<Array<{ name: string; url: string; ownerEmail: string }>> {
  return db
    .selectFrom('sites')
    .innerJoin('users', 'users.id', 'sites.user_id')
    .select(['sites.name as name', 'sites.url as url', 'users.email as ownerEmail'])
    .orderBy('sites.created_at')
    .execute();
}
