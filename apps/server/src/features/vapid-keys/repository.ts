import type { Kysely, Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database, SiteVapidKeyRow } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** The keys of a site still in use (not retired), the primary first, then oldest first. */
export function listKeys(db: Db, siteId: string): Promise<SiteVapidKeyRow[]> {
  return db
    .selectFrom('site_vapid_keys')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('retired_at', 'is', null)
    .orderBy('is_primary', 'desc')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findKey(db: Db, siteId: string, keyId: string): Promise<SiteVapidKeyRow | undefined> {
  return db.selectFrom('site_vapid_keys').selectAll().where('site_id', '=', siteId).where('id', '=', keyId).where('retired_at', 'is', null).executeTakeFirst();
}

/** Any key of the site with this public key, retired ones included (a public key is on a site once). */
export function findKeyByPublicKey(db: Db, siteId: string, publicKey: string): Promise<SiteVapidKeyRow | undefined> {
  return db.selectFrom('site_vapid_keys').selectAll().where('site_id', '=', siteId).where('public_key', '=', publicKey).executeTakeFirst();
}

/**
 * Active subscribers per key of a site. Rows written without a key (before
 * subscribers recorded one) are signed with the primary key, so they count
 * for it (`null` here).
 */
export async function activeSubscribersPerKey(db: Db, siteId: string): Promise<Map<string | null, number>> {
  const rows = await db
    .selectFrom('subscribers')
    .select(['vapid_key_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('site_id', '=', siteId)
    .where('is_active', '=', 1)
    .groupBy('vapid_key_id')
    .execute();
  return new Map(rows.map((row) => [row.vapid_key_id, Number(row.n)]));
}

export async function countActiveSubscribersOfKey(db: Db, keyId: string): Promise<number> {
  const row = await db
    .selectFrom('subscribers')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('vapid_key_id', '=', keyId)
    .where('is_active', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Serialises the key changes of one site (PostgreSQL locks the site row until
 * the transaction ends; SQLite runs one write transaction at a time). Answers
 * whether the site still exists.
 */
export async function lockSiteKeys(trx: Transaction<Database>, kind: DatabaseKind, siteId: string): Promise<boolean> {
  const query = trx.selectFrom('sites').select('id').where('id', '=', siteId);
  return (await (kind === 'postgres' ? query.forUpdate() : query).executeTakeFirst()) !== undefined;
}

export async function insertKey(db: Db, row: SiteVapidKeyRow): Promise<void> {
  await db.insertInto('site_vapid_keys').values(row).execute();
}

/**
 * Makes `key` the site's one primary key: the others lose the flag first (the
 * partial unique index allows one primary per site), and the site's own key
 * columns, which the snippet and the SDK read, take the pair.
 */
export async function makePrimary(trx: Transaction<Database>, siteId: string, key: SiteVapidKeyRow, now: number): Promise<void> {
  await trx.updateTable('site_vapid_keys').set({ is_primary: 0 }).where('site_id', '=', siteId).where('is_primary', '=', 1).execute();
  await trx.updateTable('site_vapid_keys').set({ is_primary: 1 }).where('id', '=', key.id).execute();
  // The install check passed for the snippet of the key before: it says nothing of the new one (the checklist asks again).
  await trx.updateTable('sites').set({ vapid_public_key: key.public_key, vapid_private_key: key.private_key, install_check: null, updated_at: now }).where('id', '=', siteId).execute();
}

export async function retireKey(db: Db, keyId: string, now: number): Promise<void> {
  await db.updateTable('site_vapid_keys').set({ retired_at: now }).where('id', '=', keyId).execute();
}
