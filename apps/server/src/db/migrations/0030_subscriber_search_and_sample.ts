import { sql, type Kysely, type SqlBool } from 'kysely';

// Lists at a million, the pages 0029 left slow (docs/product.md, "Subscribers"
// and "Segments"; README "Benchmarks", bench:lists):
//
// - subscribers_site_browser_os_country: a search of the subscribers list
//   matches browser, OS or country, low-cardinality columns. The search text
//   is resolved into lists of the values it matches (subscribers/search.ts),
//   and the matching rows are counted as index ranges of this one index (no
//   row is read). One more index entry per subscribe.
// - subscribers_site_sample: a stable sample of about 1 in 85 subscribers
//   (the 4th and 3rd characters from the end of the random UUID, "00"–"02"
//   of 256 hex pairs; not the last two, which in the numbered ids of
//   bench/support/big-site.ts would follow the same residues as its browsers),
//   whose browser, OS, country and subscription time the index holds: a
//   segment count on a large site is estimated from it and says so
//   (segments/sample-estimate.ts). Only a sampled subscriber writes an entry.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('subscribers_site_browser_os_country')
    .on('subscribers')
    .columns(['site_id', 'browser', 'os', 'country', 'is_active'])
    .execute();
  await db.schema
    .createIndex('subscribers_site_sample')
    .on('subscribers')
    .columns(['site_id', 'is_active', 'browser', 'os', 'country', 'subscribed_at'])
    .where(sql.raw<SqlBool>(SAMPLE_PREDICATE))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('subscribers_site_sample').execute();
  await db.schema.dropIndex('subscribers_site_browser_os_country').execute();
}

/**
 * The sample's condition, word for word as queries must repeat it for the
 * partial index to serve them (segments/sample-estimate.ts imports it).
 */
export const SAMPLE_PREDICATE = "substr(id, length(id) - 3, 2) IN ('00', '01', '02')";
