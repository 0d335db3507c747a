import type { Kysely } from 'kysely';

// Local-time delivery and quiet hours (docs/delivery.md, "Local-time delivery"
// and "Quiet hours"; docs/product.md, "Local-time delivery" and "Quiet hours").
// A notification may be sent at a wall-clock time in each subscriber's zone
// (`delivery_mode`, `local_time`; existing ones keep "at once"); it may be
// exempt from the site's quiet hours. A send split by zone is one run per
// due instant: `zones` is the JSON array of the subscriber time zones it
// reaches (null: every subscriber, as until now) and `zone_send_id` names the
// run the split came from, so the zones of one send are counted together.
// `quiet_hours_deferred_count` counts the subscribers whose push waited for a
// window's end. Sites' quiet hours are two "HH:MM" (both null: none).
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notifications').addColumn('delivery_mode', 'text', (c) => c.notNull().defaultTo('at_once')).execute();
  await db.schema.alterTable('notifications').addColumn('local_time', 'text').execute();
  await db.schema.alterTable('notifications').addColumn('quiet_hours_exempt', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('notifications').addColumn('quiet_hours_deferred_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('notification_runs').addColumn('zones', 'text').execute();
  await db.schema.alterTable('notification_runs').addColumn('zone_send_id', 'text').execute();
  await db.schema.alterTable('sites').addColumn('quiet_hours_start', 'text').execute();
  await db.schema.alterTable('sites').addColumn('quiet_hours_end', 'text').execute();
  await db.schema.createIndex('notification_runs_zone_send').on('notification_runs').column('zone_send_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notification_runs_zone_send').execute();
  for (const column of ['quiet_hours_end', 'quiet_hours_start']) await db.schema.alterTable('sites').dropColumn(column).execute();
  for (const column of ['zone_send_id', 'zones']) await db.schema.alterTable('notification_runs').dropColumn(column).execute();
  for (const column of ['quiet_hours_deferred_count', 'quiet_hours_exempt', 'local_time', 'delivery_mode']) await db.schema.alterTable('notifications').dropColumn(column).execute();
}
