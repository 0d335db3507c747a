import type { Insertable, Kysely, Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import { membershipsOf } from '../../db/membership';
import type { Database, UploadsTable } from '../../db/schema';
import type { NotificationStatus } from '@herald/contracts';

type Db = Kysely<Database> | Transaction<Database>;

export type UploadRow = UploadsTable;

export async function insertUpload(db: Db, upload: Insertable<UploadsTable>): Promise<void> {
  await db.insertInto('uploads').values(upload).execute();
}

/**
 * Serialises one user's uploads on PostgreSQL, so two parallel uploads cannot
 * both fit in the room left by the quota (SQLite runs one write transaction
 * at a time already). Holds the user row until the transaction ends.
 */
export async function lockUploadsOfUser(trx: Transaction<Database>, kind: DatabaseKind, userId: string): Promise<void> {
  if (kind !== 'postgres') return;
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}

/** Bytes and number of the user's uploads. */
export async function usageOfUser(db: Db, userId: string): Promise<{ bytes: number; count: number }> {
  const row = await db
    .selectFrom('uploads')
    .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('byte_size'), eb.lit(0)).as('bytes'), eb.fn.countAll<number>().as('count')])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return { bytes: Number(row.bytes), count: Number(row.count) };
}

/** The user's uploads, newest first. */
export function listUploadsOfUser(db: Db, userId: string, page: { limit: number; offset: number }): Promise<UploadRow[]> {
  return db
    .selectFrom('uploads')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** An upload if it is the user's (else undefined: the caller answers 404). */
export function findUploadOfUser(db: Db, userId: string, id: string): Promise<UploadRow | undefined> {
  return db.selectFrom('uploads').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

export async function deleteUpload(db: Db, id: string): Promise<void> {
  await db.deleteFrom('uploads').where('id', '=', id).execute();
}

/** Notification statuses that can still send (a failed one, or one completed with errors, can be retried); completed and cancelled ones are history. */
const STILL_SENDING: NotificationStatus[] = ['draft', 'scheduled', 'sending', 'failed', 'completed_with_errors'];

export interface UploadUse {
  kind: 'notification' | 'welcome campaign' | 'RSS feed' | 'site';
  name: string;
}

/**
 * What on the sites the user is a member of can still send and points at the file: a
 * notification that is not finished, a welcome campaign (or one of its
 * steps, any version: enrolled subscribers may still follow an older one),
 * an RSS feed's icon, a site's icon. Matched on the URL's path, so a link
 * written before PUBLIC_URL changed, or a site-relative `/uploads/…`, counts.
 * Links on sites the user has no part in do not: they cannot pin someone else's quota.
 */
export async function findUsesOfUpload(db: Db, userId: string, fileName: string, limit = 20): Promise<UploadUse[]> {
  // The stored name is a UUID and an extension: no LIKE wildcard in it.
  const pattern = `%/uploads/${fileName}`;
  const [notifications, campaigns, steps, feeds, sites] = await Promise.all([
    db
      .selectFrom('notifications')
      .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'notifications.site_id')
      .select('notifications.title as name')
      // Drip steps' notification rows are reported as their campaign, below.
      .where('notifications.source', '!=', 'campaign')
      .where('notifications.status', 'in', STILL_SENDING)
      .where((eb) => eb.or([eb('notifications.icon_url', 'like', pattern), eb('notifications.image_url', 'like', pattern)]))
      .limit(limit)
      .execute(),
    db
      .selectFrom('welcome_campaigns')
      .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'welcome_campaigns.site_id')
      .select('welcome_campaigns.name as name')
      .where('welcome_campaigns.icon_url', 'like', pattern)
      .limit(limit)
      .execute(),
    db
      .selectFrom('welcome_campaign_steps')
      .innerJoin('welcome_campaigns', 'welcome_campaigns.id', 'welcome_campaign_steps.campaign_id')
      .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'welcome_campaigns.site_id')
      .select('welcome_campaigns.name as name')
      .distinct()
      .where((eb) => eb.or([eb('welcome_campaign_steps.icon_url', 'like', pattern), eb('welcome_campaign_steps.image_url', 'like', pattern)]))
      .limit(limit)
      .execute(),
    db
      .selectFrom('rss_feeds')
      .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'rss_feeds.site_id')
      .select('rss_feeds.name as name')
      .where('rss_feeds.icon_url', 'like', pattern)
      .limit(limit)
      .execute(),
    db.selectFrom('sites').innerJoin(membershipsOf(db, userId), 'membership.site_id', 'sites.id').select('sites.name as name').where('sites.icon', 'like', pattern).limit(limit).execute(),
  ]);
  const campaignNames = [...new Set([...campaigns, ...steps].map((row) => row.name))];
  return [
    ...notifications.map((row) => ({ kind: 'notification' as const, name: row.name })),
    ...campaignNames.map((name) => ({ kind: 'welcome campaign' as const, name })),
    ...feeds.map((row) => ({ kind: 'RSS feed' as const, name: row.name })),
    ...sites.map((row) => ({ kind: 'site' as const, name: row.name })),
  ];
}
