import { sql, type Kysely } from 'kysely';

// Welcome campaigns (spec §2, §4): drip sequences for new subscribers.
// Steps are versioned: editing a campaign writes a new version of its steps
// (each with its own notification row), and an enrolled subscriber keeps the
// version it was enrolled with (spec §4 "changes affect only future subscribers").
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('welcome_campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('icon_url', 'text')
    .addColumn('utm_source', 'text')
    .addColumn('utm_medium', 'text')
    .addColumn('utm_campaign', 'text')
    .addColumn('segment_id', 'text')
    .addColumn('steps_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('welcome_campaigns_site_created').on('welcome_campaigns').columns(['site_id', 'created_at']).execute();
  // Spec §4/§9: only one active welcome campaign per site, enforced by the database too.
  await db.schema
    .createIndex('welcome_campaigns_one_active_per_site')
    .on('welcome_campaigns')
    .column('site_id')
    .unique()
    .where(sql<boolean>`is_active = 1`)
    .execute();

  await db.schema
    .createTable('welcome_campaign_steps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('welcome_campaigns.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('sequence_order', 'integer', (c) => c.notNull())
    .addColumn('delay_minutes', 'integer', (c) => c.notNull())
    // What is sent: the content below with the campaign's UTM parameters and icon applied.
    .addColumn('notification_id', 'text', (c) => c.notNull().references('notifications.id').onDelete('cascade'))
    // What the owner wrote, shown back in the edit form.
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('destination_url', 'text', (c) => c.notNull())
    .addColumn('icon_url', 'text')
    .addColumn('image_url', 'text')
    .addColumn('actions', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('welcome_campaign_steps_version_order', ['campaign_id', 'version', 'sequence_order'])
    .execute();
  await db.schema.createIndex('welcome_campaign_steps_notification').on('welcome_campaign_steps').column('notification_id').execute();

  await db.schema
    .createTable('welcome_campaign_enrollments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('welcome_campaigns.id').onDelete('cascade'))
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('subscriber_id', 'text', (c) => c.notNull().references('subscribers.id').onDelete('cascade'))
    .addColumn('steps_version', 'integer', (c) => c.notNull())
    .addColumn('enrolled_at', 'bigint', (c) => c.notNull())
    // A subscriber is enrolled in a campaign at most once.
    .addUniqueConstraint('welcome_campaign_enrollments_campaign_subscriber', ['campaign_id', 'subscriber_id'])
    .execute();
  await db.schema.createIndex('welcome_campaign_enrollments_subscriber').on('welcome_campaign_enrollments').column('subscriber_id').execute();

  // Drip runs target one subscriber; the scheduler's drip guard looks up a
  // subscriber's earlier steps on every tick (see welcome-campaigns/enrollment.ts).
  await db.schema
    .createIndex('notification_runs_subscriber_due')
    .on('notification_runs')
    .columns(['subscriber_id', 'due_at'])
    .where(sql<boolean>`subscriber_id is not null`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notification_runs_subscriber_due').execute();
  for (const table of ['welcome_campaign_enrollments', 'welcome_campaign_steps', 'welcome_campaigns']) {
    await db.schema.dropTable(table).execute();
  }
}
