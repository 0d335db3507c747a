import type { Insertable, Kysely, Transaction } from 'kysely';
import { membershipsOf } from '../../db/membership';
import type { Database, SiteApiKeyRow, SiteApiKeysTable } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertApiKey(db: Db, row: Insertable<SiteApiKeysTable>): Promise<void> {
  await db.insertInto('site_api_keys').values(row).execute();
}

/** A site's keys that still work, oldest first. */
export function listActiveApiKeys(db: Db, siteId: string): Promise<SiteApiKeyRow[]> {
  return db
    .selectFrom('site_api_keys')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function countActiveApiKeys(db: Db, siteId: string): Promise<number> {
  const row = await db
    .selectFrom('site_api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('site_id', '=', siteId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A key that still works, if it belongs to a site of the user (another user's key is indistinguishable from a missing one). */
export function findActiveApiKeyOfUser(db: Db, userId: string, keyId: string): Promise<(SiteApiKeyRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('site_api_keys')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'site_api_keys.site_id')
    .selectAll('site_api_keys')
    .select('membership.role as member_role')
    .where('site_api_keys.id', '=', keyId)
    .where('site_api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function revokeApiKey(db: Db, keyId: string, now: number): Promise<boolean> {
  const result = await db.updateTable('site_api_keys').set({ revoked_at: now }).where('id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export function findApiKeyByHash(db: Db, keyHash: string): Promise<SiteApiKeyRow | undefined> {
  return db.selectFrom('site_api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Records use at most once per `resolutionMs`, so a busy integration does not write on every call. */
export async function touchApiKey(db: Db, keyId: string, now: number, resolutionMs: number): Promise<void> {
  await db
    .updateTable('site_api_keys')
    .set({ last_used_at: now })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - resolutionMs)]))
    .execute();
}
