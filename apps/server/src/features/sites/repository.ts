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
