import type { Kysely } from 'kysely';

// RSS feeds (spec §2 RSS Feeds, §3) and the items each feed has already seen.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rss_feeds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('icon_url', 'text')
    .addColumn('utm_source', 'text')
    .addColumn('utm_medium', 'text')
    .addColumn('utm_campaign', 'text')
    .addColumn('show_action_buttons', 'integer', (c) => c.notNull())
    .addColumn('create_draft', 'integer', (c) => c.notNull())
    .addColumn('max_pushes_per_day', 'integer', (c) => c.notNull())
    .addColumn('segment_id', 'text')
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('baseline_recorded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('last_fetched_at', 'bigint')
    .addColumn('last_item_guid', 'text')
    .addColumn('last_error', 'text')
    .addColumn('next_check_at', 'bigint', (c) => c.notNull())
    .addColumn('poll_lease_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The scheduler's due-work query: active feeds by next check time.
  await db.schema.createIndex('rss_feeds_active_next_check').on('rss_feeds').columns(['is_active', 'next_check_at']).execute();
  await db.schema.createIndex('rss_feeds_site_created').on('rss_feeds').columns(['site_id', 'created_at']).execute();

  await db.schema
    .createTable('rss_feed_items')
    .addColumn('feed_id', 'text', (c) => c.notNull().references('rss_feeds.id').onDelete('cascade'))
    // sha256 of the item's id (guid / atom:id / derived): one row per item, ever.
    .addColumn('item_key', 'text', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    // sha256 of the item's link, so a re-issued guid for the same article is still recognised.
    .addColumn('link_key', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    // The site's local day (YYYY-MM-DD) when the item was processed: the daily maximum counts by it.
    .addColumn('local_day', 'text', (c) => c.notNull())
    .addColumn('notification_id', 'text')
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rss_feed_items_pk', ['feed_id', 'item_key'])
    .execute();
  await db.schema.createIndex('rss_feed_items_feed_link').on('rss_feed_items').columns(['feed_id', 'link_key']).execute();
  await db.schema.createIndex('rss_feed_items_feed_day').on('rss_feed_items').columns(['feed_id', 'local_day', 'outcome']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rss_feed_items').execute();
  await db.schema.dropTable('rss_feeds').execute();
}
