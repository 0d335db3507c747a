import { sql, type Kysely, type SqlBool } from 'kysely';

// Segment estimates with a tag (issue 15 part 5; docs/product.md,
// "Segments"): a segment with a tag was estimated by checking each sampled
// subscriber's tags, and PostgreSQL chose to read every subscriber holding
// the tag instead (~100,000 for a tag on a tenth of a million: 50–65 ms).
// The sample of migration 0030 is chosen by the subscriber's id, so a sampled
// subscriber's tag rows can be told by their subscriber_id alone:
// subscriber_tags_sample holds the tag rows of sampled subscribers only
// (about 1 in 85), and the estimate counts against it (~10 ms). The
// condition is the sample's, written on subscriber_id; queries repeat it word
// for word. One index entry for about 1 tag write in 85.
// Shipped migrations are never edited: add a new file instead.
export const TAG_SAMPLE_PREDICATE = "substr(subscriber_id, length(subscriber_id) - 3, 2) IN ('00', '01', '02')";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('subscriber_tags_sample')
    .on('subscriber_tags')
    .columns(['site_id', 'tag', 'subscriber_id'])
    .where(sql.raw<SqlBool>(TAG_SAMPLE_PREDICATE))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('subscriber_tags_sample').execute();
}
