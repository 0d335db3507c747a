import { sql, type Kysely, type SqlBool } from 'kysely';

// Runs made for one subscriber are bounded too (issue 15 part 1; docs/storage.md,
// "Retention"): every trigger firing and every welcome step is a run of its
// own, so notification_runs grew with traffic like deliveries did. Once
// retention has compacted such a run's deliveries, the run row is removed
// as well, unless it is its notification's latest run (Retry and the
// "kept N days" answer read that one).
// - notifications.removed_run_count: runs removed so, so a triggered
//   notification's "fired N times" stays what it was;
// - notification_runs_notification_created: "is there a later run of this
//   notification?" answered from the index, one seek per run;
// - notification_runs_personal_compacted: the compacted one-subscriber runs,
//   oldest compaction first; an entry lives until its run is removed.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notifications').addColumn('removed_run_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('notification_runs_notification_created').on('notification_runs').columns(['notification_id', 'created_at']).execute();
  await db.schema
    .createIndex('notification_runs_personal_compacted')
    .on('notification_runs')
    .column('deliveries_compacted_at')
    .where(sql.raw<SqlBool>('subscriber_id is not null and deliveries_compacted_at is not null'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notification_runs_personal_compacted').execute();
  await db.schema.dropIndex('notification_runs_notification_created').execute();
  await db.schema.alterTable('notifications').dropColumn('removed_run_count').execute();
}
