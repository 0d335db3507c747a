import type { Kysely } from 'kysely';

// A notification's CSV report being downloaded holds its compaction off
// (docs/storage.md, "Retention"): the report writes the kept rows as lines and
// then the compacted groups, at different moments, so rows compacted in
// between were counted twice. One row per download under way, until when (a
// download refreshes its row and removes it at its end; a lost one runs out).
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('report_reads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('notification_id', 'text', (c) => c.notNull().references('notifications.id').onDelete('cascade'))
    .addColumn('until', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('report_reads_notification').on('report_reads').columns(['notification_id', 'until']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('report_reads').execute();
}
