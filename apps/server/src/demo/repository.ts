// SQL of the demo seeder: the emptiness check, the audience in bulk, and the
// back-dated history (finished runs, their deliveries, the counters and the
// hourly rollup) that the delivery engine and the beacons would have written
// had the demo site lived through the last three months. Everything else the
// demo holds is created through the features' own services.
import type { SegmentRules } from '@herald/contracts';
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type {
  Database,
  DeliveriesTable,
  DeliveryStatsHourlyTable,
  NotificationFailuresTable,
  NotificationRow,
  NotificationsTable,
  NotificationRunsTable,
  RunRow,
  StatsHourlyTable,
  SubscriberRow,
} from '../db/schema';
import { applySegmentRules } from '../features/segments/segment-rules';

type Db = Kysely<Database> | Transaction<Database>;

/** Rows per INSERT: well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const ROWS_PER_INSERT = 500;

async function insertInChunks<T>(rows: readonly T[], insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await insert(rows.slice(i, i + ROWS_PER_INSERT));
}

/** How many accounts and sites the database holds: the demo fills only a database with neither. */
export async function countAccountsAndSites(db: Db): Promise<{ users: number; sites: number }> {
  const [users, sites] = await Promise.all([
    db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    db.selectFrom('sites').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { users: Number(users.n), sites: Number(sites.n) };
}

/** Up to `limit` account emails, to recognise a database that holds only the demo. */
export async function accountEmails(db: Db, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('users').select('email').orderBy('email').limit(limit).execute();
  return rows.map((row) => row.email);
}

export async function insertSubscribers(db: Db, rows: ReadonlyArray<Omit<SubscriberRow, 'seq'>>): Promise<void> {
  await insertInChunks(rows, (chunk) => db.insertInto('subscribers').values(chunk).execute());
}

export async function insertSubscriberTags(db: Db, rows: ReadonlyArray<{ subscriber_id: string; site_id: string; tag: string }>): Promise<void> {
  await insertInChunks(rows, (chunk) => db.insertInto('subscriber_tags').values(chunk).execute());
}

/** sites.active_subscriber_count, counted from the rows themselves. */
export async function recountActiveSubscribers(db: Db, siteId: string): Promise<void> {
  await db
    .updateTable('sites')
    .set((eb) => ({
      active_subscriber_count: eb
        .selectFrom('subscribers')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .where('subscribers.site_id', '=', siteId)
        .where('subscribers.is_active', '=', 1),
    }))
    .where('id', '=', siteId)
    .execute();
}

/** When the site's next active recurring occurrence falls, if any. */
export async function nextRecurringOccurrenceAt(db: Db, siteId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('recurring_schedules')
    .select((eb) => eb.fn.min<number>('next_run_at').as('next'))
    .where('site_id', '=', siteId)
    .where('is_active', '=', 1)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** The site's runs still waiting whose time has come, oldest first. */
export function dueRuns(db: Db, siteId: string, now: number): Promise<RunRow[]> {
  return db
    .selectFrom('notification_runs')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('status', '=', 'pending')
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .orderBy('dedupe_key')
    .execute();
}

export function notificationsOfSite(db: Db, siteId: string): Promise<NotificationRow[]> {
  return db.selectFrom('notifications').selectAll().where('site_id', '=', siteId).execute();
}

export async function segmentRulesOfSite(db: Db, siteId: string): Promise<Map<string, string>> {
  const rows = await db.selectFrom('segments').select(['id', 'rules']).where('site_id', '=', siteId).execute();
  return new Map(rows.map((row) => [row.id, row.rules]));
}

/**
 * The audience a run had when it was sent at `at`: the subscribers active
 * then (subscribed, and not yet unsubscribed), narrowed by the segment's rules
 * as the engine applies them (delivery/audience.ts), in id order.
 */
export async function audienceAt(db: Db, siteId: string, at: number, rules: SegmentRules | undefined, subscriberId: string | null): Promise<string[]> {
  let query = db
    .selectFrom('subscribers')
    .select('subscribers.id')
    .where('subscribers.site_id', '=', siteId)
    .where('subscribers.subscribed_at', '<=', at)
    .where((eb) => eb.or([eb('subscribers.unsubscribed_at', 'is', null), eb('subscribers.unsubscribed_at', '>', at)]));
  if (subscriberId) query = query.where('subscribers.id', '=', subscriberId);
  if (rules) query = applySegmentRules(query, rules, at);
  const rows = await query.orderBy('subscribers.id').execute();
  return rows.map((row) => row.id);
}

export async function insertDeliveries(db: Db, rows: ReadonlyArray<Insertable<DeliveriesTable>>): Promise<void> {
  await insertInChunks(rows, (chunk) => db.insertInto('deliveries').values(chunk).execute());
}

export async function updateRun(db: Db, runId: string, changes: Updateable<NotificationRunsTable>): Promise<void> {
  await db.updateTable('notification_runs').set(changes).where('id', '=', runId).execute();
}

export async function updateNotification(db: Db, notificationId: string, changes: Updateable<NotificationsTable>): Promise<void> {
  await db.updateTable('notifications').set(changes).where('id', '=', notificationId).execute();
}

/** Adds to the site's hourly rollup (rows for the same hour add up, as addToHourlyStats does). */
export async function addHourlyStats(db: Db, rows: ReadonlyArray<Insertable<StatsHourlyTable>>): Promise<void> {
  const columns = ['sent', 'delivered', 'clicked', 'failed', 'subscribed', 'unsubscribed', 'lost_at_push_service'] as const;
  await insertInChunks(rows, (chunk) =>
    db
      .insertInto('stats_hourly')
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(['site_id', 'hour_start']).doUpdateSet((eb) => Object.fromEntries(columns.map((column) => [column, eb(`stats_hourly.${column}`, '+', eb.ref(`excluded.${column}`))]))),
      )
      .execute(),
  );
}

/** The failure groups of the played-back sends (one row per notification, reason and push service). */
export async function insertNotificationFailures(db: Db, rows: ReadonlyArray<Insertable<NotificationFailuresTable>>): Promise<void> {
  await insertInChunks(rows, (chunk) => db.insertInto('notification_failures').values(chunk).execute());
}

/** The Delivery section's hourly rows of the played-back sends (distinct keys: history.ts adds them up first). */
export async function insertDeliveryStats(db: Db, rows: ReadonlyArray<Insertable<DeliveryStatsHourlyTable>>): Promise<void> {
  await insertInChunks(rows, (chunk) => db.insertInto('delivery_stats_hourly').values(chunk).execute());
}

/** Each subscriber's latest delivered beacon of the played-back history. */
export async function setLastDelivered(db: Db, latest: ReadonlyMap<string, number>): Promise<void> {
  for (const [subscriberId, at] of latest) await db.updateTable('subscribers').set({ last_delivered_at: at }).where('id', '=', subscriberId).execute();
}

/** What the demo holds, for the command's summary. */
export async function siteTotals(db: Db, siteId: string) {
  const count = async (table: 'notifications' | 'segments' | 'welcome_campaigns' | 'rss_feeds' | 'site_api_keys' | 'site_events') => {
    const row = await db
      .selectFrom(table)
      .select(sql<number>`count(*)`.as('n'))
      .where('site_id', '=', siteId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  const subscribers = await db
    .selectFrom('subscribers')
    .select([sql<number>`count(*)`.as('total'), sql<number>`sum(is_active)`.as('active')])
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  const dashboardNotifications = await db
    .selectFrom('notifications')
    .select(sql<number>`count(*)`.as('n'))
    .where('site_id', '=', siteId)
    .where('source', '!=', 'campaign')
    .executeTakeFirstOrThrow();
  return {
    subscribers: Number(subscribers.total),
    activeSubscribers: Number(subscribers.active ?? 0),
    notifications: Number(dashboardNotifications.n),
    segments: await count('segments'),
    welcomeCampaigns: await count('welcome_campaigns'),
    rssFeeds: await count('rss_feeds'),
    apiKeys: await count('site_api_keys'),
    siteEvents: await count('site_events'),
    // A delivery row names only its run (migration 0034).
    deliveries: Number(
      (
        await db
          .selectFrom('deliveries')
          .innerJoin('notification_runs', 'notification_runs.seq', 'deliveries.run_seq')
          .select(sql<number>`count(*)`.as('n'))
          .where('notification_runs.site_id', '=', siteId)
          .executeTakeFirstOrThrow()
      ).n,
    ),
  };
}
