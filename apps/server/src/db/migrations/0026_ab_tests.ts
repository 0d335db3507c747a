import { sql, type Kysely } from 'kysely';

// A/B tests of a one-time notification (docs/product.md, "A/B tests";
// docs/delivery.md, "A/B tests"):
// - ab_tests: one row per notification that carries 2–4 variants (JSON).
//   sample_percent null: every variant goes to the whole audience, split
//   evenly; else a random sample of that share is split evenly and, once
//   decided, the winner goes to the rest. `status` moves testing → decided
//   once, by one conditional UPDATE that also creates the remainder's run in
//   its transaction; winner_index, decided_at, decided_by and significant
//   record the decision. sample_audience / sample_seen / sample_picked: the state of the
//   sample's draw (selection sampling: exactly round(N × percent) of N), kept
//   with each fan-out page so a resumed fan-out draws the same subscribers.
// - deliveries.variant_index: the variant a delivery carries (null: not an
//   A/B send), so each variant's reach, deliveries and clicks come from the
//   rows themselves; the index covers that count per notification.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ab_tests')
    .addColumn('notification_id', 'text', (c) => c.primaryKey().references('notifications.id').onDelete('cascade'))
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('variants', 'text', (c) => c.notNull())
    .addColumn('sample_percent', 'integer')
    .addColumn('decide_after_minutes', 'integer')
    .addColumn('decide', 'text', (c) => c.notNull().defaultTo('auto'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('testing'))
    .addColumn('winner_index', 'integer')
    .addColumn('decided_at', 'bigint')
    .addColumn('decided_by', 'text')
    .addColumn('significant', 'integer')
    .addColumn('sample_audience', 'integer')
    .addColumn('sample_seen', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sample_picked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The decision source reads only the tests still to decide automatically
  // (tests of every variant to everyone, or picked by hand, stay out of it).
  await db.schema.createIndex('ab_tests_due').on('ab_tests').columns(['status', 'decide', 'sample_percent']).execute();
  await db.schema.alterTable('deliveries').addColumn('variant_index', 'integer').execute();
  // Covering: a variant's figures are counted from this index alone, without
  // reading the delivery rows. Partial: deliveries of other sends (no
  // variant) are not in it, so they cost what they did.
  await db.schema
    .createIndex('deliveries_notification_variant')
    .on('deliveries')
    .columns(['notification_id', 'variant_index', 'status', 'delivered_at', 'clicked_at'])
    .where(sql.ref('variant_index'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_notification_variant').execute();
  await db.schema.alterTable('deliveries').dropColumn('variant_index').execute();
  await db.schema.dropTable('ab_tests').execute();
}
