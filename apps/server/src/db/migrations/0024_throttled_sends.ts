import type { Kysely } from 'kysely';

// Throttled sends (docs/delivery.md, "Throttled sends"; docs/product.md,
// "Delivery options"): a notification may spread its send over at most
// `throttle_per_minute` pushes a minute (null: no throttle, as until now).
// A throttled run counts the minute it is granting pushes in
// (`throttle_window_start`, `throttle_window_used`), and each delivery
// granted a place in that minute carries it (`throttle_window`) until a
// worker claims it; the claim is refused once the minute has passed.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notifications').addColumn('throttle_per_minute', 'integer').execute();
  await db.schema.alterTable('notification_runs').addColumn('throttle_window_start', 'bigint').execute();
  await db.schema.alterTable('notification_runs').addColumn('throttle_window_used', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('deliveries').addColumn('throttle_window', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').dropColumn('throttle_window').execute();
  await db.schema.alterTable('notification_runs').dropColumn('throttle_window_used').execute();
  await db.schema.alterTable('notification_runs').dropColumn('throttle_window_start').execute();
  await db.schema.alterTable('notifications').dropColumn('throttle_per_minute').execute();
}
