import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, SiteEventRow, SiteEventsTable, SiteRow, SubscriberRow } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export async function siteExists(db: Db, siteId: string): Promise<boolean> {
  return (await db.selectFrom('sites').select('id').where('id', '=', siteId).executeTakeFirst()) !== undefined;
}

/** What the public routes need to know of a site: whether it verifies identities, with what key, and its server-only tags. */
export function findSiteIdentityRules(db: Db, siteId: string): Promise<Pick<SiteRow, 'identity_secret' | 'identity_verification' | 'server_only_tags'> | undefined> {
  return db.selectFrom('sites').select(['identity_secret', 'identity_verification', 'server_only_tags']).where('id', '=', siteId).executeTakeFirst();
}

type SubscriberRef = Pick<SubscriberRow, 'id' | 'external_id'>;

export function findActiveSubscriberByEndpointHash(db: Db, siteId: string, endpointHash: string): Promise<SubscriberRef | undefined> {
  return db
    .selectFrom('subscribers')
    .select(['id', 'external_id'])
    .where('site_id', '=', siteId)
    .where('endpoint_hash', '=', endpointHash)
    .where('is_active', '=', 1)
    .executeTakeFirst();
}

export function findActiveSubscriberById(db: Db, siteId: string, subscriberId: string): Promise<SubscriberRef | undefined> {
  return db
    .selectFrom('subscribers')
    .select(['id', 'external_id'])
    .where('site_id', '=', siteId)
    .where('id', '=', subscriberId)
    .where('is_active', '=', 1)
    .executeTakeFirst();
}

/**
 * The active subscribers a site's own user id names (one person, several
 * browsers), at most `limit`. `verifiedOnly` (a site that verifies
 * identities) leaves out claims made without a valid identity hash; otherwise
 * signed claims still come first, so unsigned ones cannot crowd them out of
 * the limit.
 */
export function findActiveSubscribersByExternalId(
  db: Db,
  siteId: string,
  externalId: string,
  limit: number,
  options: { verifiedOnly: boolean },
): Promise<SubscriberRef[]> {
  let query = db
    .selectFrom('subscribers')
    .select(['id', 'external_id'])
    .where('site_id', '=', siteId)
    .where('external_id', '=', externalId)
    .where('is_active', '=', 1);
  if (options.verifiedOnly) query = query.where('external_id_verified', '=', 1);
  return query.orderBy('external_id_verified', 'desc').orderBy('id').limit(limit).execute();
}

export async function setExternalId(db: Db, subscriberId: string, externalId: string, verified: boolean, now: number): Promise<void> {
  await db
    .updateTable('subscribers')
    .set({ external_id: externalId, external_id_verified: verified ? 1 : 0, updated_at: now })
    .where('id', '=', subscriberId)
    .execute();
}

export async function removeTags(db: Db, subscriberId: string, tags: string[]): Promise<void> {
  if (!tags.length) return;
  await db.deleteFrom('subscriber_tags').where('subscriber_id', '=', subscriberId).where('tag', 'in', tags).execute();
}

export async function addTags(db: Db, subscriberId: string, siteId: string, tags: string[]): Promise<void> {
  if (!tags.length) return;
  await db
    .insertInto('subscriber_tags')
    .values(tags.map((tag) => ({ subscriber_id: subscriberId, site_id: siteId, tag })))
    .onConflict((oc) => oc.columns(['subscriber_id', 'tag']).doNothing())
    .execute();
}

export async function tagsOfSubscriber(db: Db, subscriberId: string): Promise<string[]> {
  const rows = await db.selectFrom('subscriber_tags').select('tag').where('subscriber_id', '=', subscriberId).orderBy('tag').execute();
  return rows.map((row) => row.tag);
}

export async function touchSubscriber(db: Db, subscriberId: string, now: number): Promise<void> {
  await db.updateTable('subscribers').set({ updated_at: now }).where('id', '=', subscriberId).execute();
}

/** Stores an event unless one with the same dedupe scope exists; true when stored. */
export async function insertEventIfNew(db: Db, row: Insertable<SiteEventsTable>): Promise<boolean> {
  const inserted = await db
    .insertInto('site_events')
    .values(row)
    .onConflict((oc) => oc.columns(['site_id', 'dedupe_scope']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export function findEventByDedupeScope(db: Db, siteId: string, dedupeScope: string): Promise<SiteEventRow | undefined> {
  return db.selectFrom('site_events').selectAll().where('site_id', '=', siteId).where('dedupe_scope', '=', dedupeScope).executeTakeFirst();
}

export async function setTriggeredCount(db: Db, eventId: string, triggered: number): Promise<void> {
  await db.updateTable('site_events').set({ triggered_count: triggered }).where('id', '=', eventId).execute();
}

export function listRecentEvents(db: Db, siteId: string, limit: number): Promise<SiteEventRow[]> {
  return db
    .selectFrom('site_events')
    .selectAll()
    .where('site_id', '=', siteId)
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Deletes up to `limit` events received before `before`; returns how many. */
export async function deleteEventsReceivedBefore(db: Db, before: number, limit: number): Promise<number> {
  const oldest = db.selectFrom('site_events').select('id').where('received_at', '<', before).orderBy('received_at').limit(limit);
  const result = await db.deleteFrom('site_events').where('id', 'in', oldest).executeTakeFirst();
  return Number(result.numDeletedRows);
}
