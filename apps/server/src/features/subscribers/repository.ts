import { SUBSCRIBER_TAG_MAX_COUNT } from '@herald/contracts';
import { sql, type ExpressionBuilder, type Insertable, type Kysely, type SelectQueryBuilder, type Transaction, type Updateable } from 'kysely';
import { membershipsOf } from '../../db/membership';
import type { Database, SubscriberRow, SubscribersTable } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';
import type { ConcernedSites, SubscriberCreatedHook } from './hooks';
import { inKeyOrder } from '../../db/lock-order';
import { numberNewSubscribers } from '../../db/subscriber-seq';
import { tagsOfSubscribers } from '../../db/subscriber-tags';
import type { DatabaseKind } from '../../db/database';

type Db = Kysely<Database> | Transaction<Database>;

export async function siteExists(db: Db, siteId: string): Promise<boolean> {
  return (await db.selectFrom('sites').select('id').where('id', '=', siteId).executeTakeFirst()) !== undefined;
}

/**
 * The keys (not retired) of each of these sites that exists, by site: a
 * site that is not there is absent; one with no key left has an empty list.
 * With them, for each hook in order, the sites its `concerns` holds for
 * (hooks.ts; a hook without one is left empty: it is called for every site).
 * One statement for a whole batch of subscribes (the service picks the key
 * each subscription was made with: the one the browser named, else the
 * primary).
 */
export async function sitesAndKeys(
  db: Db,
  siteIds: readonly string[],
  hooks: readonly SubscriberCreatedHook[],
): Promise<{ keysBySite: Map<string, Array<{ id: string; publicKey: string; isPrimary: boolean }>>; concerned: ConcernedSites }> {
  const conditions = hooks.flatMap((hook, index) => (hook.concerns ? [{ index, condition: hook.concerns }] : []));
  const keysBySite = new Map<string, Array<{ id: string; publicKey: string; isPrimary: boolean }>>();
  const concerned = hooks.map(() => new Set<string>());
  if (!siteIds.length) return { keysBySite, concerned };
  const rows: Array<Record<string, unknown> & { site_id: string; key_id: string | null; public_key: string | null; is_primary: number | null }> = await db
    .selectFrom('sites')
    .leftJoin('site_vapid_keys as key', (join) => join.onRef('key.site_id', '=', 'sites.id').on('key.retired_at', 'is', null))
    .select(['sites.id as site_id', 'key.id as key_id', 'key.public_key', 'key.is_primary'])
    .select((eb) => conditions.map(({ index, condition }) => sql<number>`case when ${condition(eb.ref('sites.id'))} then 1 else 0 end`.as(`concerns_${index}`)))
    .where('sites.id', 'in', siteIds)
    .execute();
  for (const row of rows) {
    const keys = keysBySite.get(row.site_id) ?? [];
    if (row.key_id !== null && row.public_key !== null) keys.push({ id: row.key_id, publicKey: row.public_key, isPrimary: Number(row.is_primary) === 1 });
    keysBySite.set(row.site_id, keys);
    for (const { index } of conditions) if (Number(row[`concerns_${index}`]) === 1) concerned[index]!.add(row.site_id);
  }
  return { keysBySite, concerned };
}

/** For each hook, which of these sites its `concerns` holds for (sitesAndKeys without the keys: the demo's seed). */
export async function sitesConcerned(db: Db, siteIds: readonly string[], hooks: readonly SubscriberCreatedHook[]): Promise<ConcernedSites> {
  return (await sitesAndKeys(db, siteIds, hooks)).concerned;
}

export function findSubscriberByEndpointHash(db: Db, siteId: string, hash: string): Promise<SubscriberRow | undefined> {
  return db.selectFrom('subscribers').selectAll().where('site_id', '=', siteId).where('endpoint_hash', '=', hash).executeTakeFirst();
}

export function findSubscriberById(db: Db, subscriberId: string): Promise<SubscriberRow | undefined> {
  return db.selectFrom('subscribers').selectAll().where('id', '=', subscriberId).executeTakeFirst();
}

/** The subscriber if it belongs to a site of the user; another user's subscriber is indistinguishable from a missing one. */
export function findSubscriberOfUser(db: Db, userId: string, subscriberId: string): Promise<(SubscriberRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('subscribers')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'subscribers.site_id')
    .selectAll('subscribers')
    .select('membership.role as member_role')
    .where('subscribers.id', '=', subscriberId)
    .executeTakeFirst();
}

/** A subscriber row as a subscribe stores it, its id chosen up front. */
export type NewSubscriber = Insertable<SubscribersTable> & { id: string };

/**
 * Inserts the subscribers whose endpoints are new to their sites, in one
 * statement, in (site, endpoint) order (two batches inserting the same new
 * endpoints wait for each other in the same order, never in a cycle);
 * answers the ids of those inserted. On PostgreSQL a concurrent insert of the
 * same endpoint waits for the first to commit and then does nothing, so
 * exactly one caller gets the row.
 */
export async function insertSubscribersIfNew(db: Db, kind: DatabaseKind, rows: readonly NewSubscriber[]): Promise<Set<string>> {
  if (!rows.length) return new Set();
  const ordered = inKeyOrder(rows, (row) => [row.site_id, row.endpoint_hash]);
  const inserted = await db
    .insertInto('subscribers')
    .values(await numberNewSubscribers(db, kind, ordered))
    .onConflict((oc) => oc.columns(['site_id', 'endpoint_hash']).doNothing())
    .returning('id')
    .execute();
  return new Set(inserted.map((row) => row.id));
}

export interface SubscriberRefresh {
  p256dh: string;
  auth: string;
  browser: string;
  os: string;
  country: string;
  language: string | null;
  timezone: string | null;
  user_agent: string | null;
  last_seen_at: number;
  updated_at: number;
  /** The site VAPID key the subscription was made with, when known (absent: unchanged). */
  vapid_key_id?: string;
}

/**
 * Reactivates an inactive subscriber and refreshes it; the id when this call
 * flipped it to active. The `is_active = 0` condition is re-checked under the
 * row lock, so two concurrent reactivations flip it once.
 */
export async function reactivateSubscriber(db: Db, siteId: string, hash: string, refresh: SubscriberRefresh): Promise<string | undefined> {
  const row = await db
    .updateTable('subscribers')
    .set({ ...refresh, is_active: 1, unsubscribed_at: null })
    .where('site_id', '=', siteId)
    .where('endpoint_hash', '=', hash)
    .where('is_active', '=', 0)
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

/** Refreshes keys, metadata and last seen of a stored endpoint without touching its active state. */
export async function refreshSubscriber(db: Db, siteId: string, hash: string, refresh: SubscriberRefresh): Promise<string | undefined> {
  const row = await db
    .updateTable('subscribers')
    .set(refresh)
    .where('site_id', '=', siteId)
    .where('endpoint_hash', '=', hash)
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

/** Moves a subscriber to a new endpoint (after `pushsubscriptionchange`), keeping its id; false when it no longer exists. */
/** Locks these sites' subscribers with these endpoints, by number (PostgreSQL; db/lock-order.ts). */
export async function lockSubscribersByEndpoint(trx: Db, endpoints: ReadonlyArray<{ siteId: string; hash: string }>): Promise<void> {
  await trx
    .selectFrom('subscribers')
    .select('seq')
    .where((eb) => eb(eb.refTuple('site_id', 'endpoint_hash'), 'in', endpoints.map(({ siteId, hash }) => eb.tuple(siteId, hash))))
    .orderBy('seq')
    .forNoKeyUpdate()
    .execute();
}

export async function moveSubscriberEndpoint(db: Db, subscriberId: string, endpoint: string, hash: string, refresh: SubscriberRefresh): Promise<boolean> {
  const row = await db
    .updateTable('subscribers')
    .set({ ...refresh, endpoint, endpoint_hash: hash })
    .where('id', '=', subscriberId)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Makes a subscriber active if it is not; true when this call flipped it (re-checked under the row lock). */
export async function activateSubscriber(db: Db, subscriberId: string): Promise<boolean> {
  const row = await db
    .updateTable('subscribers')
    .set({ is_active: 1, unsubscribed_at: null })
    .where('id', '=', subscriberId)
    .where('is_active', '=', 0)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Marks a subscriber inactive if it is active (and, when given, still has the
 * endpoint hash the caller expects). Returns its site when this call made the
 * change, so the caller adjusts the counters exactly once.
 */
export async function deactivateSubscriber(
  db: Db,
  subscriberId: string,
  now: number,
  expectedEndpointHash?: string,
): Promise<{ siteId: string } | undefined> {
  let query = db
    .updateTable('subscribers')
    .set({ is_active: 0, unsubscribed_at: now, updated_at: now })
    .where('id', '=', subscriberId)
    .where('is_active', '=', 1);
  if (expectedEndpointHash !== undefined) query = query.where('endpoint_hash', '=', expectedEndpointHash);
  const row = await query.returning('site_id').executeTakeFirst();
  return row ? { siteId: row.site_id } : undefined;
}

/**
 * Active, subscribed on or before `cutoff`, no delivered beacon since then (or
 * ever), and its page has not posted the subscription since (a browser that
 * came back, or re-posts it daily, is alive whatever its old dates say):
 * index subscribers_site_active_delivered.
 */
function staleCondition(eb: ExpressionBuilder<Database, 'subscribers'>, siteId: string, cutoff: number) {
  return eb.and([
    eb('site_id', '=', siteId),
    eb('is_active', '=', 1),
    eb.or([eb('last_delivered_at', 'is', null), eb('last_delivered_at', '<', cutoff)]),
    eb('subscribed_at', '<=', cutoff),
    eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<=', cutoff)]),
  ]);
}

export async function countStaleSubscribers(db: Db, siteId: string, cutoff: number): Promise<number> {
  const row = await db
    .selectFrom('subscribers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where((eb) => staleCondition(eb, siteId, cutoff))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The site's subscribers in one state (a range of index subscribers_site_active_id). */
async function countSubscribersInState(db: Db, siteId: string, isActive: 0 | 1): Promise<number> {
  const row = await db
    .selectFrom('subscribers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('site_id', '=', siteId)
    .where('is_active', '=', isActive)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function countActiveSubscribers(db: Db, siteId: string): Promise<number> {
  return countSubscribersInState(db, siteId, 1);
}

/** Deactivates up to `limit` stale subscribers (by id, so each call takes a bounded batch); returns their ids. */
export async function deactivateStaleSubscribers(db: Db, siteId: string, cutoff: number, now: number, limit: number): Promise<string[]> {
  const ids = await db
    .selectFrom('subscribers')
    .select('id')
    .where((eb) => staleCondition(eb, siteId, cutoff))
    .orderBy('id')
    .limit(limit)
    .execute();
  if (!ids.length) return [];
  // The condition again: a subscriber that got a delivery (or left) since the select is not touched.
  const rows = await db
    .updateTable('subscribers')
    .set({ is_active: 0, unsubscribed_at: now, updated_at: now })
    .where((eb) => staleCondition(eb, siteId, cutoff))
    .where(
      'id',
      'in',
      ids.map((row) => row.id),
    )
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

export interface SubscriberFilters {
  isActive?: boolean;
  /** Lower-case search text; matches browser, OS or country code as a substring. */
  search?: string;
  /** Country codes whose English name contains the search text. */
  searchCountryCodes?: string[];
  /** The search resolved into disjoint equality parts (search.ts); when set, used instead of the substring match. */
  searchParts?: SearchPart[];
}

/** Subscribers whose browser, OS and country are in these lists (an absent list: any). */
export interface SearchPart {
  browser: string[];
  os?: string[];
  country?: string[];
}

function searchPartCondition(eb: ExpressionBuilder<Database, 'subscribers'>, part: SearchPart) {
  return eb.and([
    eb('subscribers.browser', 'in', part.browser),
    ...(part.os ? [eb('subscribers.os', 'in', part.os)] : []),
    ...(part.country ? [eb('subscribers.country', 'in', part.country)] : []),
  ]);
}

/** `%` and `_` in the user's text are literal, not wildcards. */
function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function applyFilters<O>(query: SelectQueryBuilder<Database, 'subscribers', O>, siteId: string, filters: SubscriberFilters) {
  let filtered = query.where('subscribers.site_id', '=', siteId);
  if (filters.isActive !== undefined) filtered = filtered.where('subscribers.is_active', '=', filters.isActive ? 1 : 0);
  if (filters.searchParts) {
    const parts = filters.searchParts;
    filtered = filtered.where((eb) => (parts.length ? eb.or(parts.map((part) => searchPartCondition(eb, part))) : eb.lit(false)));
  } else if (filters.search) {
    const pattern = likeContains(filters.search);
    const codes = filters.searchCountryCodes ?? [];
    filtered = filtered.where((eb) =>
      eb.or([
        // lower() on both engines: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
        eb(sql`lower(subscribers.browser)`, 'like', sql`${pattern} escape '\\'`),
        eb(sql`lower(subscribers.os)`, 'like', sql`${pattern} escape '\\'`),
        eb(sql`lower(subscribers.country)`, 'like', sql`${pattern} escape '\\'`),
        ...(codes.length ? [eb('subscribers.country', 'in', codes)] : []),
      ]),
    );
  }
  return filtered;
}

/**
 * A page of a site's subscribers in list order (newest first: subscribed_at,
 * then id) or, for a page near the end, the reverse (list-page.ts). The page's
 * ids are found first on index subscribers_site_subscribed_id, so a deep offset
 * steps over index entries rather than rows; then the rows are read by id.
 */
export async function listSubscribers(
  db: Db,
  siteId: string,
  filters: SubscriberFilters,
  page: { offset: number; limit: number; order: 'newest' | 'oldest'; past?: ExportCursor },
): Promise<SubscriberRow[]> {
  const direction = page.order === 'newest' ? 'desc' : 'asc';
  let query = applyFilters(db.selectFrom('subscribers').select('subscribers.id'), siteId, filters);
  // Keyset: only the rows past this one in the page's order (a range of the same index).
  const past = page.past;
  if (past) query = query.where((eb) => eb(eb.refTuple('subscribers.subscribed_at', 'subscribers.id'), direction === 'desc' ? '<' : '>', eb.tuple(past.subscribedAt, past.id)));
  const ids = await query
    .orderBy('subscribers.subscribed_at', direction)
    .orderBy('subscribers.id', direction)
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  if (!ids.length) return [];
  return db
    .selectFrom('subscribers')
    .selectAll()
    .where(
      'id',
      'in',
      ids.map((row) => row.id),
    )
    .orderBy('subscribed_at', direction)
    .orderBy('id', direction)
    .execute();
}

export function countInactiveSubscribers(db: Db, siteId: string): Promise<number> {
  return countSubscribersInState(db, siteId, 0);
}

/** Where the CSV export stopped: the last subscriber written (oldest first: subscribed_at, then id). */
export interface ExportCursor {
  subscribedAt: number;
  id: string;
}

/**
 * One keyset page of the CSV export, oldest first, with the list's filters
 * (index subscribers_site_subscribed_id): each page starts after the last row of
 * the one before, so the export never holds the table and never skips or
 * repeats a row when subscribers arrive meanwhile.
 */
/** Every VAPID public key of a site by key id, retired ones included (an inactive subscriber may still name one). */
export async function vapidPublicKeysOfSite(db: Db, siteId: string): Promise<Map<string, string>> {
  const rows = await db.selectFrom('site_vapid_keys').select(['id', 'public_key']).where('site_id', '=', siteId).execute();
  return new Map(rows.map((row) => [row.id, row.public_key]));
}

export function subscribersExportPage(db: Db, siteId: string, filters: SubscriberFilters, after: ExportCursor | null, limit: number): Promise<SubscriberRow[]> {
  let query = applyFilters(db.selectFrom('subscribers').selectAll('subscribers'), siteId, filters);
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('subscribers.subscribed_at', '>', after.subscribedAt),
        eb.and([eb('subscribers.subscribed_at', '=', after.subscribedAt), eb('subscribers.id', '>', after.id)]),
      ]),
    );
  }
  return query.orderBy('subscribers.subscribed_at').orderBy('subscribers.id').limit(limit).execute();
}

/**
 * The subscribers a resolved search matches: one count per part (the parts
 * are disjoint), each over ranges of index subscribers_site_browser_os_country,
 * in one statement.
 */
export async function countSearchParts(db: Db, siteId: string, parts: SearchPart[], isActive: boolean | undefined): Promise<number> {
  if (!parts.length) return 0;
  const partCount = (part: SearchPart) => {
    let query = db
      .selectFrom('subscribers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('subscribers.site_id', '=', siteId)
      .where((eb) => searchPartCondition(eb, part));
    if (isActive !== undefined) query = query.where('subscribers.is_active', '=', isActive ? 1 : 0);
    return query;
  };
  const row = await db.selectNoFrom(parts.map((part, i) => partCount(part).as(`part${i}`))).executeTakeFirstOrThrow();
  return Object.values(row as Record<string, number | string | null>).reduce<number>((sum, n) => sum + Number(n ?? 0), 0);
}

export async function countSubscribers(db: Db, siteId: string, filters: SubscriberFilters): Promise<number> {
  const row = await applyFilters(db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('total')), siteId, filters).executeTakeFirstOrThrow();
  return Number(row.total);
}


/**
 * What a browser's old subscriber row says of it, given to the row its new
 * endpoint was stored under: its tags (added to the new row's), its external
 * id and test-device mark (where the new row has none).
 */
export async function carryOverIdentity(
  db: Db,
  from: Pick<SubscriberRow, 'id' | 'external_id' | 'external_id_verified' | 'test_device' | 'test_device_name'>,
  to: Pick<SubscriberRow, 'id' | 'site_id' | 'external_id' | 'test_device'>,
): Promise<void> {
  // The new row's lock first, as every change of a subscriber's tags takes it (a no-op write; SQLite has one writer).
  await db.updateTable('subscribers').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('id', '=', to.id).execute();
  const tags = await tagsOfSubscribers(db, [from.id, to.id]);
  const had = tags.get(to.id) ?? [];
  // Up to the most a subscriber can have, as the tags API allows.
  const carried = (tags.get(from.id) ?? []).filter((tag) => !had.includes(tag)).slice(0, Math.max(0, SUBSCRIBER_TAG_MAX_COUNT - had.length));
  if (carried.length) await db.insertInto('subscriber_tags').values(carried.map((tag) => ({ subscriber_id: to.id, site_id: to.site_id, tag }))).execute();
  const changes: Updateable<SubscribersTable> = {};
  if (to.external_id === null && from.external_id !== null) Object.assign(changes, { external_id: from.external_id, external_id_verified: from.external_id_verified });
  if (!to.test_device && from.test_device) Object.assign(changes, { test_device: 1, test_device_name: from.test_device_name });
  if (Object.keys(changes).length) await db.updateTable('subscribers').set(changes).where('id', '=', to.id).execute();
}

export async function replaceSubscriberTags(db: Db, subscriberId: string, siteId: string, tags: string[]): Promise<void> {
  await db.deleteFrom('subscriber_tags').where('subscriber_id', '=', subscriberId).execute();
  if (tags.length) {
    await db
      .insertInto('subscriber_tags')
      .values(tags.map((tag) => ({ subscriber_id: subscriberId, site_id: siteId, tag })))
      .execute();
  }
}

export async function touchSubscriber(db: Db, subscriberId: string, now: number): Promise<void> {
  await db.updateTable('subscribers').set({ updated_at: now }).where('id', '=', subscriberId).execute();
}
