import type { Kysely } from 'kysely';

// Automation (issue 4): recurring schedules and triggers of notifications,
// site API keys for the v1 API, and the events sites send about subscribers.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One per RECURRING notification. Occurrence k is start + k × interval in
  // the schedule's timezone; the scheduler claims occurrence
  // `next_occurrence_index` with a conditional UPDATE when `next_run_at` is due.
  await db.schema
    .createTable('recurring_schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('notification_id', 'text', (c) => c.notNull().unique().references('notifications.id').onDelete('cascade'))
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('interval_type', 'text', (c) => c.notNull())
    .addColumn('interval_value', 'integer', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('start_local', 'text', (c) => c.notNull())
    .addColumn('start_at', 'bigint', (c) => c.notNull())
    .addColumn('end_at', 'bigint')
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('next_occurrence_index', 'integer', (c) => c.notNull())
    .addColumn('next_run_at', 'bigint')
    .addColumn('last_occurrence_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('recurring_schedules_due').on('recurring_schedules').columns(['is_active', 'next_run_at']).execute();

  // One per TRIGGERED notification: the event name it listens for.
  await db.schema
    .createTable('notification_triggers')
    .addColumn('notification_id', 'text', (c) => c.primaryKey().references('notifications.id').onDelete('cascade'))
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('delay_minutes', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notification_triggers_site_event').on('notification_triggers').columns(['site_id', 'event_name']).execute();

  await db.schema
    .createTable('site_api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('site_api_keys_site').on('site_api_keys').columns(['site_id', 'created_at']).execute();

  await db.schema
    .createTable('site_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('subscriber_id', 'text')
    .addColumn('external_id', 'text')
    .addColumn('data', 'text')
    .addColumn('idempotency_key', 'text')
    // "<target>:<idempotency key>" when a key was sent, else null (NULLs never collide):
    // the same event delivered twice is stored, and acted on, once.
    .addColumn('dedupe_scope', 'text')
    .addColumn('subscriber_count', 'integer', (c) => c.notNull())
    .addColumn('triggered_count', 'integer', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('site_events_site_dedupe', ['site_id', 'dedupe_scope'])
    .execute();
  await db.schema.createIndex('site_events_site_received').on('site_events').columns(['site_id', 'received_at']).execute();
  await db.schema.createIndex('site_events_received').on('site_events').column('received_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['site_events', 'site_api_keys', 'notification_triggers', 'recurring_schedules']) {
    await db.schema.dropTable(table).execute();
  }
}
