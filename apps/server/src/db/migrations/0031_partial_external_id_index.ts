import { sql, type Kysely } from 'kysely';

// Subscribes at push speed (issue 15 part 3; docs/storage.md, "Group
// commit"): every subscribe wrote an entry into (site_id, external_id),
// although a subscriber has an external id only once the site identifies it
// (most never are). The index now holds only identified subscribers: one B-tree
// write fewer per anonymous subscribe and per imported row. Every query by
// external id compares it with `=`, which implies `is not null`, so both
// databases still use the index for it.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('subscribers_site_external').execute();
  await db.schema.createIndex('subscribers_site_external').on('subscribers').columns(['site_id', 'external_id']).where(sql.ref('external_id'), 'is not', null).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('subscribers_site_external').execute();
  await db.schema.createIndex('subscribers_site_external').on('subscribers').columns(['site_id', 'external_id']).execute();
}
