// SQL for RSS feeds and the items they have seen. Due feeds are claimed with a
// conditional UPDATE (docs/delivery.md, "Due work is claimed, not read") and
// a running check holds a short lease, so two schedulers, a scheduled check
// and "Check now" never check one feed at the same time.
import type { SegmentUse } from '../segments/segment-uses';
import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import { membershipsOf } from '../../db/membership';
import type { Database, RssFeedItemsTable, RssFeedRow, RssFeedsTable, RssItemOutcome, SiteRow } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;

/** A feed if it belongs to one of the user's sites (else undefined: the caller answers 404). */
export function findFeedOfUser(db: Db, userId: string, feedId: string): Promise<(RssFeedRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('rss_feeds')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'rss_feeds.site_id')
    .selectAll('rss_feeds')
    .select('membership.role as member_role')
    .where('rss_feeds.id', '=', feedId)
    .executeTakeFirst();
}

export function findFeed(db: Db, feedId: string): Promise<RssFeedRow | undefined> {
  return db.selectFrom('rss_feeds').selectAll().where('id', '=', feedId).executeTakeFirst();
}

export function findSite(db: Db, siteId: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('id', '=', siteId).executeTakeFirst();
}

export function listFeedsOfSite(db: Db, siteId: string): Promise<RssFeedRow[]> {
  return db.selectFrom('rss_feeds').selectAll().where('site_id', '=', siteId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/**
 * Serialises feed creation of one user on PostgreSQL, so two parallel creates
 * cannot both see room for one more feed (SQLite runs one write transaction
 * at a time already). Holds the user row until the transaction ends.
 */
export async function lockFeedsOfUser(trx: Transaction<Database>, kind: DatabaseKind, userId: string): Promise<void> {
  if (kind !== 'postgres') return;
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}

/** Feeds over all of the user's sites (RSS_FEEDS_PER_USER counts these). */
export async function countFeedsOfUser(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('rss_feeds')
    .innerJoin('sites', 'sites.id', 'rss_feeds.site_id')
    .select((eb) => eb.fn.countAll<number>().as('feeds'))
    .where('sites.user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.feeds);
}

export async function insertFeed(db: Db, row: Insertable<RssFeedsTable>): Promise<void> {
  await db.insertInto('rss_feeds').values(row).execute();
}

export async function updateFeed(db: Db, feedId: string, changes: Updateable<RssFeedsTable>): Promise<void> {
  await db.updateTable('rss_feeds').set(changes).where('id', '=', feedId).execute();
}

export async function deleteFeed(db: Db, feedId: string): Promise<void> {
  await db.deleteFrom('rss_feeds').where('id', '=', feedId).execute();
}

/**
 * Stores what a check found, unless the feed's address changed while it ran
 * (an edit starts the feed over; results for the old address would be wrong).
 */
export async function finishCheck(db: Db, feedId: string, fetchedUrl: string, changes: Updateable<RssFeedsTable>): Promise<void> {
  await db.updateTable('rss_feeds').set(changes).where('id', '=', feedId).where('url', '=', fetchedUrl).execute();
}

/**
 * Claims active feeds whose check is due by moving their next check one
 * interval ahead, in one statement. On PostgreSQL a second scheduler's UPDATE
 * waits for the first's row locks and re-checks `next_check_at <= now`, so a
 * feed is claimed once per interval however many schedulers tick.
 */
export async function claimDueFeeds(db: Db, now: number, nextCheckAt: number, limit: number): Promise<string[]> {
  const due = db
    .selectFrom('rss_feeds')
    .select('id')
    .where('is_active', '=', 1)
    .where('next_check_at', '<=', now)
    .orderBy('next_check_at')
    .limit(limit);
  const rows = await db
    .updateTable('rss_feeds')
    .set({ next_check_at: nextCheckAt })
    .where('id', 'in', due)
    .where('is_active', '=', 1)
    .where('next_check_at', '<=', now)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Takes the feed's check lease unless another check holds it; true when taken. */
export async function acquirePollLease(db: Db, feedId: string, now: number, until: number): Promise<boolean> {
  const result = await db
    .updateTable('rss_feeds')
    .set({ poll_lease_until: until })
    .where('id', '=', feedId)
    .where((eb) => eb.or([eb('poll_lease_until', 'is', null), eb('poll_lease_until', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releasePollLease(db: Db, feedId: string, until: number): Promise<void> {
  await db.updateTable('rss_feeds').set({ poll_lease_until: null }).where('id', '=', feedId).where('poll_lease_until', '=', until).execute();
}

/** Of the given item keys and link keys, the ones this feed has already seen. */
export async function findSeenKeys(db: Db, feedId: string, itemKeys: string[], linkKeys: string[]): Promise<{ items: Set<string>; links: Set<string> }> {
  const items = new Set<string>();
  const links = new Set<string>();
  // A feed holds at most a few hundred items; chunks keep each statement's parameter count small.
  for (let i = 0; i < itemKeys.length; i += 200) {
    const rows = await db
      .selectFrom('rss_feed_items')
      .select('item_key')
      .where('feed_id', '=', feedId)
      .where('item_key', 'in', itemKeys.slice(i, i + 200))
      .execute();
    for (const row of rows) items.add(row.item_key);
  }
  for (let i = 0; i < linkKeys.length; i += 200) {
    const rows = await db
      .selectFrom('rss_feed_items')
      .select('link_key')
      .where('feed_id', '=', feedId)
      .where('link_key', 'in', linkKeys.slice(i, i + 200))
      .execute();
    for (const row of rows) if (row.link_key) links.add(row.link_key);
  }
  return { items, links };
}

/**
 * Records an item as seen unless it already is; true when this call recorded
 * it. The primary key (feed, item) makes this the exactly-once gate: of two
 * checks that race on one item, only one gets `true` and acts on it.
 */
export async function recordSeenItem(db: Db, row: Insertable<RssFeedItemsTable>): Promise<boolean> {
  const result = await db
    .insertInto('rss_feed_items')
    .values(row)
    .onConflict((oc) => oc.columns(['feed_id', 'item_key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function recordSeenItems(db: Db, rows: Array<Insertable<RssFeedItemsTable>>): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    await db
      .insertInto('rss_feed_items')
      .values(rows.slice(i, i + 100))
      .onConflict((oc) => oc.columns(['feed_id', 'item_key']).doNothing())
      .execute();
  }
}

/** How many items of each outcome a feed recorded on one local day. */
export async function countOutcomesOnDay(db: Db, feedId: string, localDay: string): Promise<Record<RssItemOutcome, number>> {
  const rows = await db
    .selectFrom('rss_feed_items')
    .select(['outcome', (eb) => eb.fn.countAll<number>().as('n')])
    .where('feed_id', '=', feedId)
    .where('local_day', '=', localDay)
    .groupBy('outcome')
    .execute();
  const counts: Record<RssItemOutcome, number> = { baseline: 0, sent: 0, draft: 0, skipped: 0 };
  for (const row of rows) counts[row.outcome] = Number(row.n);
  return counts;
}

/** Today's sent and skipped counts of several feeds at once (the list page). */
export async function countTodayOfFeeds(db: Db, days: Array<{ feedId: string; localDay: string }>): Promise<Map<string, { sent: number; skipped: number }>> {
  const counts = new Map<string, { sent: number; skipped: number }>();
  if (!days.length) return counts;
  const rows = await db
    .selectFrom('rss_feed_items')
    .select(['feed_id', 'local_day', 'outcome', (eb) => eb.fn.countAll<number>().as('n')])
    .where(
      'feed_id',
      'in',
      days.map((d) => d.feedId),
    )
    .where(
      'local_day',
      'in',
      [...new Set(days.map((d) => d.localDay))],
    )
    .where('outcome', 'in', ['sent', 'skipped'])
    .groupBy(['feed_id', 'local_day', 'outcome'])
    .execute();
  const wanted = new Map(days.map((d) => [d.feedId, d.localDay]));
  for (const row of rows) {
    if (wanted.get(row.feed_id) !== row.local_day) continue;
    const entry = counts.get(row.feed_id) ?? { sent: 0, skipped: 0 };
    if (row.outcome === 'sent') entry.sent = Number(row.n);
    if (row.outcome === 'skipped') entry.skipped = Number(row.n);
    counts.set(row.feed_id, entry);
  }
  return counts;
}

/**
 * Forgets items seen long ago that the feed no longer lists, so the table
 * does not grow for ever; an item still in the feed is always remembered.
 */
export async function pruneSeenItems(db: Db, feedId: string, seenBefore: number, keepKeys: string[]): Promise<void> {
  let query = db.deleteFrom('rss_feed_items').where('feed_id', '=', feedId).where('seen_at', '<', seenBefore);
  if (keepKeys.length) query = query.where('item_key', 'not in', keepKeys);
  await query.execute();
}

/** Feeds that target a segment (deleting it is refused while they exist; see segments/segment-uses.ts). */
export async function feedsUsingSegment(db: Db, siteId: string, segmentId: string): Promise<SegmentUse[]> {
  const rows = await db
    .selectFrom('rss_feeds')
    .select(['id', 'name'])
    .where('site_id', '=', siteId)
    .where('segment_id', '=', segmentId)
    .orderBy('created_at')
    .limit(50)
    .execute();
  return rows.map((row) => ({ key: `rss-feed:${row.id}`, kind: 'RSS feed', name: row.name }));
}
