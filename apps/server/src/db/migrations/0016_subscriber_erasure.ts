import { sql, type Kysely } from 'kysely';

// Erasing a subscriber (docs/product.md, "Subscribers"; DELETE
// /subscribers/{id}?erase=true and the v1 erase by external id) deletes its
// site events, and exporting its data reads them: by subscriber, and by
// external id within a site. Without these, each of those calls would read
// every event of the last 30 days. Partial: most events name no external id.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('site_events_subscriber')
    .on('site_events')
    .column('subscriber_id')
    .where(sql<boolean>`subscriber_id is not null`)
    .execute();
  await db.schema
    .createIndex('site_events_site_external')
    .on('site_events')
    .columns(['site_id', 'external_id'])
    .where(sql<boolean>`external_id is not null`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('site_events_site_external').execute();
  await db.schema.dropIndex('site_events_subscriber').execute();
}
