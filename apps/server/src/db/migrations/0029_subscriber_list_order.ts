import type { Kysely } from 'kysely';

// Lists at a million (docs/product.md, "Subscribers"; README "Benchmarks",
// bench:lists): the subscribers list is newest first by (subscribed_at, id)
// and the CSV export oldest first by the same pair. With only
// (site_id, subscribed_at) indexed, SQLite read the whole site and sorted it
// for every page. This index holds the exact order (and the id, so a deep
// page skips index entries only), and it replaces the old one, so a
// subscribe writes no more index entries than before.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('subscribers_site_subscribed_id').on('subscribers').columns(['site_id', 'subscribed_at', 'id']).execute();
  await db.schema.dropIndex('subscribers_site_subscribed').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('subscribers_site_subscribed').on('subscribers').columns(['site_id', 'subscribed_at']).execute();
  await db.schema.dropIndex('subscribers_site_subscribed_id').execute();
}
