import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../database';

// Subscribers, notifications, their runs and per-subscriber deliveries, the
// hourly analytics rollup and uploaded images.
export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  await db.schema
    .createTable('subscribers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('endpoint_hash', 'text', (c) => c.notNull())
    .addColumn('p256dh', 'text', (c) => c.notNull())
    .addColumn('auth', 'text', (c) => c.notNull())
    .addColumn('browser', 'text')
    .addColumn('os', 'text')
    .addColumn('country', 'text')
    .addColumn('language', 'text')
    .addColumn('timezone', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('external_id', 'text')
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('subscribed_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint')
    .addColumn('unsubscribed_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('subscribers_site_endpoint', ['site_id', 'endpoint_hash'])
    .execute();
  // Fan-out pages through a site's active subscribers by id (keyset pagination).
  await db.schema.createIndex('subscribers_site_active_id').on('subscribers').columns(['site_id', 'is_active', 'id']).execute();
  await db.schema.createIndex('subscribers_site_subscribed').on('subscribers').columns(['site_id', 'subscribed_at']).execute();
  await db.schema.createIndex('subscribers_site_external').on('subscribers').columns(['site_id', 'external_id']).execute();

  await db.schema
    .createTable('subscriber_tags')
    .addColumn('subscriber_id', 'text', (c) => c.notNull().references('subscribers.id').onDelete('cascade'))
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('subscriber_tags_pk', ['subscriber_id', 'tag'])
    .execute();
  await db.schema.createIndex('subscriber_tags_site_tag').on('subscriber_tags').columns(['site_id', 'tag']).execute();

  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('destination_url', 'text', (c) => c.notNull())
    .addColumn('icon_url', 'text')
    .addColumn('image_url', 'text')
    .addColumn('actions', 'text')
    .addColumn('segment_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'bigint')
    .addColumn('sent_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('total_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('clicked_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notifications_site_created').on('notifications').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('notifications_site_status').on('notifications').columns(['site_id', 'status']).execute();
  await db.schema.createIndex('notifications_site_sent').on('notifications').columns(['site_id', 'sent_at']).execute();

  await db.schema
    .createTable('notification_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('notification_id', 'text', (c) => c.notNull().references('notifications.id').onDelete('cascade'))
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('segment_id', 'text')
    .addColumn('subscriber_id', 'text')
    .addColumn('fanout_cursor', 'text')
    .addColumn('fanout_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('total_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('clicked_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notification_runs_status_due').on('notification_runs').columns(['status', 'due_at']).execute();
  await db.schema.createIndex('notification_runs_notification').on('notification_runs').columns(['notification_id', 'due_at']).execute();

  await db.schema
    .createTable('deliveries')
    .addColumn('id', kind === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('notification_runs.id').onDelete('cascade'))
    .addColumn('notification_id', 'text', (c) => c.notNull())
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('subscriber_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .addColumn('error', 'text')
    .addColumn('sent_at', 'bigint')
    .addColumn('delivered_at', 'bigint')
    .addColumn('clicked_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // The reliability invariant: one delivery per (run, subscriber), ever.
    .addUniqueConstraint('deliveries_run_subscriber', ['run_id', 'subscriber_id'])
    .execute();
  // Only pending deliveries are looked up by run (to enqueue, to finish a run);
  // a partial index keeps recording a result from moving index entries around.
  await db.schema
    .createIndex('deliveries_run_pending')
    .on('deliveries')
    .columns(['run_id', 'id'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema.createIndex('deliveries_subscriber').on('deliveries').column('subscriber_id').execute();

  await db.schema
    .createTable('stats_hourly')
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('hour_start', 'bigint', (c) => c.notNull())
    .addColumn('sent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('clicked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('subscribed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unsubscribed', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('stats_hourly_pk', ['site_id', 'hour_start'])
    .execute();

  await db.schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('byte_size', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['uploads', 'stats_hourly', 'deliveries', 'notification_runs', 'notifications', 'subscriber_tags', 'subscribers']) {
    await db.schema.dropTable(table).execute();
  }
}
