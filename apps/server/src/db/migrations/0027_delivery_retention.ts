import { sql, type Kysely } from 'kysely';

// Delivery retention (docs/storage.md, "Retention"; docs/delivery.md,
// "Retention"): delivery rows of finished runs are kept
// DELIVERY_RETENTION_DAYS, then compacted.
// - compacted_deliveries: per notification, A/B variant (-1: none), state,
//   reason ('': none) and push service ('': none), how many deliveries
//   compaction removed and how many of them had a delivered / clicked beacon.
//   Per notification, not per run: a trigger or welcome step is a run per
//   subscriber, and a row per run would be as many rows as it removes.
//   Written in the transaction that deletes the rows it counts, so every
//   figure read from rows (A/B variant figures, the CSV report's lines) is
//   rows + these, exactly once whatever crashes. Goes with its notification.
// - notification_runs.deliveries_compacted_at: when compaction took the run
//   (a claim: a retry never reopens a run whose rows are being removed); the
//   partial index lists finished runs not yet taken, oldest first.
// - subscribers.last_sent_at / last_clicked_at: what a subscriber's removed
//   rows said (last_delivered_at is written by the beacon already).
// - deliveries_subscriber is dropped: deliveries_subscriber_status_sent
//   (migration 0023) starts with subscriber_id and serves the same lookups.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('compacted_deliveries')
    .addColumn('notification_id', 'text', (c) => c.notNull().references('notifications.id').onDelete('cascade'))
    .addColumn('variant_index', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('push_service', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('delivered', 'integer', (c) => c.notNull())
    .addColumn('clicked', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('compacted_deliveries_pk', ['notification_id', 'variant_index', 'status', 'reason', 'push_service'])
    .execute();
  await db.schema.alterTable('notification_runs').addColumn('deliveries_compacted_at', 'bigint').execute();
  await db.schema
    .createIndex('notification_runs_to_compact')
    .on('notification_runs')
    .column('finished_at')
    .where(sql.ref('deliveries_compacted_at'), 'is', null)
    .execute();
  await db.schema.alterTable('subscribers').addColumn('last_sent_at', 'bigint').execute();
  await db.schema.alterTable('subscribers').addColumn('last_clicked_at', 'bigint').execute();
  await db.schema.dropIndex('deliveries_subscriber').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('deliveries_subscriber').on('deliveries').column('subscriber_id').execute();
  await db.schema.alterTable('subscribers').dropColumn('last_clicked_at').execute();
  await db.schema.alterTable('subscribers').dropColumn('last_sent_at').execute();
  await db.schema.dropIndex('notification_runs_to_compact').execute();
  await db.schema.alterTable('notification_runs').dropColumn('deliveries_compacted_at').execute();
  await db.schema.dropTable('compacted_deliveries').execute();
}
