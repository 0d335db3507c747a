import type { Kysely, Transaction } from 'kysely';
import { membershipsOf } from '../../db/membership';
import type { Database, NewSite, SiteRow, SiteUpdate } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;

/** The sites the user is a member of, each with the user's role: their own and those shared with them. */
export function listSitesOfUser(db: Db, userId: string): Promise<Array<SiteRow & WithMemberRole>> {
  return db
    .selectFrom('sites')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'sites.id')
    .selectAll('sites')
    .select('membership.role as member_role')
    .orderBy('sites.created_at', 'asc')
    .orderBy('sites.id')
    .execute();
}

/** The site with the user's role on it if they are a member; another tenant's site is indistinguishable from a missing one. */
export function findSiteOfUser(db: Db, userId: string, siteId: string): Promise<(SiteRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('sites')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'sites.id')
    .selectAll('sites')
    .select('membership.role as member_role')
    .where('sites.id', '=', siteId)
    .executeTakeFirst();
}

export function findSiteById(db: Db, siteId: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('id', '=', siteId).executeTakeFirst();
}

/** The site, its creator as its first owner and its VAPID key pair as its primary key, together. */
export async function insertSite(db: Kysely<Database>, site: NewSite, vapidKeyId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('sites').values(site).execute();
    await trx
      .insertInto('site_vapid_keys')
      .values({ id: vapidKeyId, site_id: site.id, public_key: site.vapid_public_key, private_key: site.vapid_private_key, is_primary: 1, created_at: site.created_at, retired_at: null })
      .execute();
    await trx.insertInto('site_members').values({ site_id: site.id, user_id: site.user_id, role: 'owner', created_at: site.created_at, updated_at: site.created_at }).execute();
  });
}

/** The site's VAPID public keys that are neither primary nor retired. */
export async function otherVapidPublicKeys(db: Db, siteId: string): Promise<string[]> {
  const rows = await db.selectFrom('site_vapid_keys').select('public_key').where('site_id', '=', siteId).where('is_primary', '=', 0).where('retired_at', 'is', null).execute();
  return rows.map((row) => row.public_key);
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
