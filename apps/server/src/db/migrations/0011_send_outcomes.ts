import { sql, type Kysely, type Transaction } from 'kysely';
import type { DatabaseKind } from '../database';

// The outcome model of a send (issue 11, docs/delivery.md "Outcomes"):
// - runs and notifications count expired (404/410) and skipped deliveries
//   apart from failed ones;
// - a delivery keeps the reason code and push service of its last failure,
//   so a send that waits for retries can say why, and a finished one can be
//   grouped;
// - notification_failures: per notification, reason and push service, how
//   many failed and one error text, kept in the result transaction (so the
//   report outlives any clean-up of delivery rows);
// - delivery_stats_hourly: per site, hour, push service and outcome, the
//   counts the dashboard's Delivery section reads (never the deliveries);
// - stats_hourly.lost_at_push_service: subscribers deactivated because
//   their push service said the subscription is gone or invalid;
// - subscribers.last_delivered_at: the latest delivered beacon, for the
//   stale-subscriber clean-up (spec §9: clean inactive subscribers at 90+ days).
// Rows stored before are brought into the model: a "gone" delivery whose
// subscriber had unsubscribed before sending is skipped, other "gone" ones
// expired; counters are recomputed from them, and a finished send with
// failures is "completed_with_errors". Failure reasons of earlier sends were
// not recorded and stay unknown.
// Shipped migrations are never edited: add a new file instead.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations see the schema as it was, not as the Database type says today
type Db = Kysely<any> | Transaction<any>;

export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  // PostgreSQL runs each migration in a transaction already; on SQLite this one brings its own.
  const anyDb = db as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- see Db
  if (kind === 'postgres' || anyDb.isTransaction) await migrate(anyDb);
  else await anyDb.transaction().execute((trx) => migrate(trx));
}

async function migrate(db: Db): Promise<void> {
  for (const table of ['notification_runs', 'notifications']) {
    await db.schema
      .alterTable(table)
      .addColumn('expired_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable(table)
      .addColumn('skipped_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema.alterTable('deliveries').addColumn('reason', 'text').execute();
  await db.schema.alterTable('deliveries').addColumn('push_service', 'text').execute();
  await db.schema.alterTable('subscribers').addColumn('last_delivered_at', 'bigint').execute();
  // Stale subscribers of a site: active, and no delivered beacon since a cut-off (or never).
  await db.schema.createIndex('subscribers_site_active_delivered').on('subscribers').columns(['site_id', 'is_active', 'last_delivered_at']).execute();
  await db.schema
    .alterTable('stats_hourly')
    .addColumn('lost_at_push_service', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('notification_failures')
    .addColumn('notification_id', 'text', (c) => c.notNull().references('notifications.id').onDelete('cascade'))
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('push_service', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sample_error', 'text')
    .addPrimaryKeyConstraint('notification_failures_pk', ['notification_id', 'reason', 'push_service'])
    .execute();

  await db.schema
    .createTable('delivery_stats_hourly')
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('hour_start', 'bigint', (c) => c.notNull())
    .addColumn('push_service', 'text', (c) => c.notNull())
    // accepted | failed | expired
    .addColumn('outcome', 'text', (c) => c.notNull())
    // the failure reason code; '' for accepted and expired
    .addColumn('reason', 'text', (c) => c.notNull())
    // accepted only: the bucket of the time from due to accepted; 0 otherwise
    .addColumn('latency_bucket', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('delivery_stats_hourly_pk', ['site_id', 'hour_start', 'push_service', 'outcome', 'reason', 'latency_bucket'])
    .execute();

  await bringStoredSendsIntoTheModel(db);
}

async function bringStoredSendsIntoTheModel(db: Db): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ status: 'skipped', reason: 'inactive' })
    .where('status', '=', 'gone')
    .where('error', '=', 'Subscriber unsubscribed before sending')
    .execute();
  await db.updateTable('deliveries').set({ reason: 'gone' }).where('status', '=', 'gone').execute();

  const countOf = (status: string) => sql<number>`(select count(*) from deliveries d where d.run_id = notification_runs.id and d.status = ${status})`;
  const touchedRun = sql<boolean>`exists (select 1 from deliveries d where d.run_id = notification_runs.id and d.status in ('gone', 'skipped'))`;
  await db.updateTable('notification_runs').set({ expired_count: countOf('gone'), skipped_count: countOf('skipped') }).where(touchedRun).execute();
  await db
    .updateTable('notification_runs')
    .set({ failed_count: sql<number>`case when failed_count > expired_count + skipped_count then failed_count - expired_count - skipped_count else 0 end` })
    .where((eb) => eb.or([eb('expired_count', '>', 0), eb('skipped_count', '>', 0)]))
    .execute();

  const sumOf = (column: string) => sql<number>`(select coalesce(sum(${sql.ref(`r.${column}`)}), 0) from notification_runs r where r.notification_id = notifications.id)`;
  const touchedNotification = sql<boolean>`exists (select 1 from notification_runs r where r.notification_id = notifications.id and (r.expired_count > 0 or r.skipped_count > 0))`;
  await db.updateTable('notifications').set({ expired_count: sumOf('expired_count'), skipped_count: sumOf('skipped_count') }).where(touchedNotification).execute();
  await db
    .updateTable('notifications')
    .set({ failed_count: sql<number>`case when failed_count > expired_count + skipped_count then failed_count - expired_count - skipped_count else 0 end` })
    .where((eb) => eb.or([eb('expired_count', '>', 0), eb('skipped_count', '>', 0)]))
    .execute();

  // A finished send where some deliveries failed is "completed with errors" (nothing was accepted: "failed").
  await db.updateTable('notification_runs').set({ status: 'completed_with_errors' }).where('status', '=', 'completed').where('failed_count', '>', 0).execute();
  await db
    .updateTable('notifications')
    .set({ status: 'completed_with_errors' })
    .where('type', '=', 'ONE_TIME')
    .where('status', '=', 'completed')
    .where('failed_count', '>', 0)
    .execute();

  await db
    .updateTable('subscribers')
    .set({ last_delivered_at: sql<number>`(select max(d.delivered_at) from deliveries d where d.subscriber_id = subscribers.id)` })
    .where(sql<boolean>`exists (select 1 from deliveries d where d.subscriber_id = subscribers.id and d.delivered_at is not null)`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const anyDb = db as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- see Db
  await anyDb.schema.dropTable('delivery_stats_hourly').execute();
  await anyDb.schema.dropTable('notification_failures').execute();
  await anyDb.schema.alterTable('stats_hourly').dropColumn('lost_at_push_service').execute();
  await anyDb.schema.dropIndex('subscribers_site_active_delivered').execute();
  await anyDb.schema.alterTable('subscribers').dropColumn('last_delivered_at').execute();
  await anyDb.schema.alterTable('deliveries').dropColumn('push_service').execute();
  await anyDb.schema.alterTable('deliveries').dropColumn('reason').execute();
  for (const table of ['notifications', 'notification_runs']) {
    await anyDb.schema.alterTable(table).dropColumn('skipped_count').execute();
    await anyDb.schema.alterTable(table).dropColumn('expired_count').execute();
  }
}
