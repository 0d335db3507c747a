import { sql, type Kysely } from 'kysely';

// Webhooks (docs/product.md, "Webhooks"; docs/delivery.md, "Webhooks"):
// - webhooks: a site's endpoints, the events each wants and the signing
//   secret (kept as it is, like the VAPID private key: Herald signs with it).
//   clicks_next_at: when the next notification.clicked batch may go (at most
//   one a minute), moved ahead by the scheduler that claims the batch.
// - webhook_deliveries: one row per (webhook, event), the outbox. Its id is
//   the webhook-id header, the same on every attempt. next_attempt_at says
//   what is due; the scheduler claims due rows with one conditional UPDATE.
// - webhook_attempts: every attempt (status code or error), the delivery log;
//   finished deliveries and their attempts are kept 30 days.
// - webhook_click_tallies: clicks per notification since the last batch.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('clicks_next_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_site').on('webhooks').columns(['site_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql<boolean>`status = 'pending'`)
    .execute();
  await db.schema.createIndex('webhook_deliveries_webhook').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
  await db.schema
    .createIndex('webhook_deliveries_finished')
    .on('webhook_deliveries')
    .column('finished_at')
    .where(sql<boolean>`finished_at is not null`)
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_webhook').on('webhook_attempts').columns(['webhook_id', 'attempted_at']).execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').column('delivery_id').execute();

  await db.schema
    .createTable('webhook_click_tallies')
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('notification_id', 'text', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_click_tallies_pk', ['webhook_id', 'notification_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_click_tallies', 'webhook_attempts', 'webhook_deliveries', 'webhooks']) await db.schema.dropTable(table).execute();
}
