import type { Kysely } from 'kysely';

// The frequency cap (docs/product.md, "Frequency cap"; docs/delivery.md,
// "Frequency cap"): a site may allow at most `frequency_cap_max` pushes per
// subscriber in any `frequency_cap_hours` (both null: no cap, as until now).
// A notification may be exempt. Deliveries skipped for it are counted on the
// notification (`skipped_capped_count`, part of `skipped_count`). The index
// lets a batch count each subscriber's recent pushes by range, not by
// reading all their deliveries ever.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sites').addColumn('frequency_cap_max', 'integer').execute();
  await db.schema.alterTable('sites').addColumn('frequency_cap_hours', 'integer').execute();
  await db.schema.alterTable('notifications').addColumn('frequency_cap_exempt', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('notifications').addColumn('skipped_capped_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('deliveries_subscriber_status_sent').on('deliveries').columns(['subscriber_id', 'status', 'sent_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_subscriber_status_sent').execute();
  await db.schema.alterTable('notifications').dropColumn('skipped_capped_count').execute();
  await db.schema.alterTable('notifications').dropColumn('frequency_cap_exempt').execute();
  await db.schema.alterTable('sites').dropColumn('frequency_cap_hours').execute();
  await db.schema.alterTable('sites').dropColumn('frequency_cap_max').execute();
}
