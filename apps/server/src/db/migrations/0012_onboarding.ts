import { sql, type Kysely } from 'kysely';

// From install to first push (issue 12):
// - sites: the opt-in prompt the SDK shows (JSON; null = the defaults), the
//   last install check (JSON), when the setup checklist was hidden, and when
//   the owner last sent a test push (a checklist step).
// - subscribers: the owner's own browsers marked as test devices, with a name.
//   Test sends reach only these; a partial index keeps finding them cheap on
//   sites with millions of subscribers.
// - test_device_links: the one-time codes of "make this browser a test
//   device" links (only their hash is stored, like any other emailed link).
// - prompt_stats: how often each prompt type was shown and led to a
//   subscription, per site and hour (subscriber analytics).
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sites').addColumn('prompt_settings', 'text').execute();
  await db.schema.alterTable('sites').addColumn('install_check', 'text').execute();
  await db.schema.alterTable('sites').addColumn('checklist_dismissed_at', 'bigint').execute();
  await db.schema.alterTable('sites').addColumn('test_sent_at', 'bigint').execute();

  await db.schema
    .alterTable('subscribers')
    .addColumn('test_device', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('subscribers').addColumn('test_device_name', 'text').execute();
  await db.schema
    .createIndex('subscribers_site_test_devices')
    .on('subscribers')
    .columns(['site_id', 'id'])
    .where(sql.ref('test_device'), '=', 1)
    .execute();

  await db.schema
    .createTable('test_device_links')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('created_by', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('subscriber_id', 'text')
    .execute();
  await db.schema.createIndex('test_device_links_site').on('test_device_links').columns(['site_id', 'expires_at']).execute();

  await db.schema
    .createTable('prompt_stats')
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('hour_start', 'bigint', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('shown', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('subscribed', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('prompt_stats_pk', ['site_id', 'hour_start', 'prompt'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('prompt_stats').execute();
  await db.schema.dropTable('test_device_links').execute();
  await db.schema.dropIndex('subscribers_site_test_devices').execute();
  await db.schema.alterTable('subscribers').dropColumn('test_device_name').execute();
  await db.schema.alterTable('subscribers').dropColumn('test_device').execute();
  await db.schema.alterTable('sites').dropColumn('test_sent_at').execute();
  await db.schema.alterTable('sites').dropColumn('checklist_dismissed_at').execute();
  await db.schema.alterTable('sites').dropColumn('install_check').execute();
  await db.schema.alterTable('sites').dropColumn('prompt_settings').execute();
}
