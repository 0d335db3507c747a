import { sql, type Kysely } from 'kysely';

// A delivery row no longer repeats its run's notification and site (issue 15
// part 1; docs/storage.md, "Bytes per delivery"): every row of a run held the
// same two UUID texts (74 bytes of a ~336-byte row on SQLite), which the run
// already holds. Readers that need them join the run (notification_runs.id).
// - deliveries_notification_variant becomes deliveries_run_variant: an A/B
//   test's figures are read per run of its notification (the sample and the
//   rest), with the same columns, so still from the index alone.
// - No foreign key or other index names the two columns; on SQLite each
//   DROP COLUMN rewrites the table once (CHANGELOG, "Upgrade").
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_notification_variant').execute();
  await db.schema
    .createIndex('deliveries_run_variant')
    .on('deliveries')
    .columns(['run_id', 'variant_index', 'status', 'delivered_at', 'clicked_at'])
    .where(sql.ref('variant_index'), 'is not', null)
    .execute();
  await db.schema.alterTable('deliveries').dropColumn('notification_id').execute();
  await db.schema.alterTable('deliveries').dropColumn('site_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back as they were (not null), filled from each row's run.
  await db.schema.alterTable('deliveries').addColumn('notification_id', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('deliveries').addColumn('site_id', 'text', (c) => c.notNull().defaultTo('')).execute();
  await sql`update deliveries set
      notification_id = (select run.notification_id from notification_runs run where run.id = deliveries.run_id),
      site_id = (select run.site_id from notification_runs run where run.id = deliveries.run_id)`.execute(db);
  await db.schema.dropIndex('deliveries_run_variant').execute();
  await db.schema
    .createIndex('deliveries_notification_variant')
    .on('deliveries')
    .columns(['notification_id', 'variant_index', 'status', 'delivered_at', 'clicked_at'])
    .where(sql.ref('variant_index'), 'is not', null)
    .execute();
}
