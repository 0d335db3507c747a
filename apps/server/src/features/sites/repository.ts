import type { Kysely, Transaction } from 'kysely';
import type { Database, NewSite, SiteRow, SiteUpdate } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export function listSitesOfUser(db: Db, userId: string): Promise<SiteRow[]> {
  return db.selectFrom('sites').selectAll().where('user_id', '=', userId).orderBy('created_at', 'asc').orderBy('id').execute();
}

/** The site if it belongs to the user; another user's site is indistinguishable from a missing one. */
export function findSiteOfUser(db: Db, userId: string, siteId: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('id', '=', siteId).where('user_id', '=', userId).executeTakeFirst();
}

export function findSiteById(db: Db, siteId: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('id', '=', siteId).executeTakeFirst();
}

export async function insertSite(db: Db, site: NewSite): Promise<void> {
  await db.insertInto('sites').values(site).execute();
}

export async function updateSite(db: Db, siteId: string, changes: SiteUpdate): Promise<void> {
  await db.updateTable('sites').set(changes).where('id', '=', siteId).execute();
}

/** Stores the identity secret unless the site has one; the stored one wins a race. */
export async function setIdentitySecretIfMissing(db: Db, siteId: string, secret: string): Promise<void> {
  await db.updateTable('sites').set({ identity_secret: secret }).where('id', '=', siteId).where('identity_secret', 'is', null).execute();
}

export async function deleteSite(db: Db, siteId: string): Promise<void> {
  await db.deleteFrom('sites').where('id', '=', siteId).execute();
}

/** When the site's first subscriber subscribed (by the (site_id, subscribed_at) index), or undefined. */
export async function firstSubscribedAt(db: Db, siteId: string): Promise<number | undefined> {
  const row = await db.selectFrom('subscribers').select('subscribed_at').where('site_id', '=', siteId).orderBy('subscribed_at').limit(1).executeTakeFirst();
  return row ? Number(row.subscribed_at) : undefined;
}

/** Active test devices of a site (a partial index holds only test devices). */
export async function countActiveTestDevices(db: Db, siteId: string): Promise<number> {
  const row = await db
    .selectFrom('subscribers')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('site_id', '=', siteId)
    .where('test_device', '=', 1)
    .where('is_active', '=', 1)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
