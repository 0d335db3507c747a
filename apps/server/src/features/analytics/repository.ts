// SQL of the analytics reports. Every query reads the hourly rollup or the
// notifications' own counters through an index; none touches `deliveries`,
// so a report costs the same for 100 subscribers as for 10 million.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, DeliveryHealthOutcome, NotificationRow } from '../../db/schema';
import type { FailureReason, PushServiceName } from '@herald/contracts';

type Db = Kysely<Database> | Transaction<Database>;

export interface HourlyStats {
  hour_start: number;
  sent: number;
  delivered: number;
  clicked: number;
  failed: number;
  subscribed: number;
  unsubscribed: number;
  lost_at_push_service: number;
}

/** A site's hourly rows in [fromHour, toHour), oldest first (a range scan of the primary key). */
export async function hourlyStats(db: Db, siteId: string, fromHour: number, toHour: number): Promise<HourlyStats[]> {
  if (toHour <= fromHour) return [];
  const rows = await db
    .selectFrom('stats_hourly')
    .select(['hour_start', 'sent', 'delivered', 'clicked', 'failed', 'subscribed', 'unsubscribed', 'lost_at_push_service'])
    .where('site_id', '=', siteId)
    .where('hour_start', '>=', fromHour)
    .where('hour_start', '<', toHour)
    .orderBy('hour_start')
    .execute();
  // int8 and sums come back as numbers (database.ts); the cast keeps SQLite and PostgreSQL alike.
  return rows.map((row) => ({
    hour_start: Number(row.hour_start),
    sent: Number(row.sent),
    delivered: Number(row.delivered),
    clicked: Number(row.clicked),
    failed: Number(row.failed),
    subscribed: Number(row.subscribed),
    unsubscribed: Number(row.unsubscribed),
    lost_at_push_service: Number(row.lost_at_push_service),
  }));
}

export interface DeliveryHealthRow {
  push_service: PushServiceName;
  outcome: DeliveryHealthOutcome;
  reason: FailureReason | '';
  latency_bucket: number;
  count: number;
}

/** A site's delivery_stats_hourly in [fromHour, toHour), summed over the hours (a range scan of the primary key). */
export async function deliveryHealth(db: Db, siteId: string, fromHour: number, toHour: number): Promise<DeliveryHealthRow[]> {
  if (toHour <= fromHour) return [];
  const rows = await db
    .selectFrom('delivery_stats_hourly')
    .select(['push_service', 'outcome', 'reason', 'latency_bucket', (eb) => eb.fn.sum<number>('count').as('count')])
    .where('site_id', '=', siteId)
    .where('hour_start', '>=', fromHour)
    .where('hour_start', '<', toHour)
    .groupBy(['push_service', 'outcome', 'reason', 'latency_bucket'])
    .execute();
  return rows.map((row) => ({ ...row, latency_bucket: Number(row.latency_bucket), count: Number(row.count) }));
}

/** Subscriptions gained minus lost from `fromHour` on: how far the active count moved since then. */
export async function netSubscribersSince(db: Db, siteId: string, fromHour: number): Promise<number> {
  const row = await db
    .selectFrom('stats_hourly')
    .select(sql<number>`coalesce(sum(subscribed), 0) - coalesce(sum(unsubscribed), 0)`.as('net'))
    .where('site_id', '=', siteId)
    .where('hour_start', '>=', fromHour)
    .executeTakeFirst();
  return Number(row?.net ?? 0);
}

/**
 * True once anything was ever sent, delivered or clicked for the site, or a
 * push service answered any push of it (the Delivery section's rollup: an
 * expired answer counts in no column of the other): a site that sent is never
 * shown sample data. Test sends write neither.
 */
export async function hasSendingActivity(db: Db, siteId: string): Promise<boolean> {
  const row = await db
    .selectFrom('stats_hourly')
    .select('hour_start')
    .where('site_id', '=', siteId)
    .where((eb) => eb.or([eb('sent', '>', 0), eb('delivered', '>', 0), eb('clicked', '>', 0), eb('failed', '>', 0)]))
    // Newest first: a site that sends finds a match in its latest hours.
    .orderBy('hour_start', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row !== undefined) return true;
  const answered = await db.selectFrom('delivery_stats_hourly').select('hour_start').where('site_id', '=', siteId).limit(1).executeTakeFirst();
  return answered !== undefined;
}

export type SentNotification = Pick<
  NotificationRow,
  | 'id'
  | 'title'
  | 'message'
  | 'status'
  | 'sent_at'
  | 'completed_at'
  | 'total_count'
  | 'sent_count'
  | 'failed_count'
  | 'expired_count'
  | 'skipped_count'
  | 'delivered_count'
  | 'clicked_count'
>;

const SENT_COLUMNS = [
  'id',
  'title',
  'message',
  'status',
  'sent_at',
  'completed_at',
  'total_count',
  'sent_count',
  'failed_count',
  'expired_count',
  'skipped_count',
  'delivered_count',
  'clicked_count',
] as const;

/**
 * The latest sends of the site, newest first: those a push service accepted
 * something of (by sent_at, index notifications_site_sent), and those that
 * failed outright (no sent_at; by when they finished, index
 * notifications_site_status) — a failed send belongs on the dashboard with
 * its failures, not hidden. Drip steps are left out as on the notifications
 * list: they belong to their campaign.
 */
export async function latestSentNotifications(db: Db, siteId: string, limit: number): Promise<SentNotification[]> {
  const [sent, failed] = await Promise.all([
    db
      .selectFrom('notifications')
      .select(SENT_COLUMNS)
      .where('site_id', '=', siteId)
      .where('sent_at', 'is not', null)
      .where('source', '!=', 'campaign')
      .orderBy('sent_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute(),
    db
      .selectFrom('notifications')
      .select(SENT_COLUMNS)
      .where('site_id', '=', siteId)
      .where('status', '=', 'failed')
      .where('sent_at', 'is', null)
      .where('source', '!=', 'campaign')
      .orderBy('completed_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute(),
  ]);
  const when = (row: { sent_at: number | null; completed_at: number | null }) => Number(row.sent_at ?? row.completed_at ?? 0);
  const rows = [...sent, ...failed].sort((a, b) => when(b) - when(a) || (a.id < b.id ? 1 : -1)).slice(0, limit);
  return rows.map((row) => ({
    ...row,
    sent_at: row.sent_at === null ? null : Number(row.sent_at),
    completed_at: row.completed_at === null ? null : Number(row.completed_at),
    total_count: Number(row.total_count),
    sent_count: Number(row.sent_count),
    failed_count: Number(row.failed_count),
    expired_count: Number(row.expired_count),
    skipped_count: Number(row.skipped_count),
    delivered_count: Number(row.delivered_count),
    clicked_count: Number(row.clicked_count),
  }));
}

/** Prompts shown and subscriptions they brought, per prompt type, in [fromHour, toHour). */
export async function promptTotals(db: Db, siteId: string, fromHour: number, toHour: number): Promise<Array<{ prompt: string; shown: number; subscribed: number }>> {
  if (toHour <= fromHour) return [];
  const rows = await db
    .selectFrom('prompt_stats')
    .select(['prompt', sql<number>`coalesce(sum(shown), 0)`.as('shown'), sql<number>`coalesce(sum(subscribed), 0)`.as('subscribed')])
    .where('site_id', '=', siteId)
    .where('hour_start', '>=', fromHour)
    .where('hour_start', '<', toHour)
    .groupBy('prompt')
    .execute();
  return rows.map((row) => ({ prompt: row.prompt, shown: Number(row.shown), subscribed: Number(row.subscribed) }));
}
