// SQL of the analytics reports. Every query reads the hourly rollup or the
// notifications' own counters through an index; none touches `deliveries`,
// so a report costs the same for 100 subscribers as for 10 million.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, NotificationRow } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export interface HourlyStats {
  hour_start: number;
  sent: number;
  delivered: number;
  clicked: number;
  failed: number;
  subscribed: number;
  unsubscribed: number;
}

/** A site's hourly rows in [fromHour, toHour), oldest first (a range scan of the primary key). */
export async function hourlyStats(db: Db, siteId: string, fromHour: number, toHour: number): Promise<HourlyStats[]> {
  if (toHour <= fromHour) return [];
  const rows = await db
    .selectFrom('stats_hourly')
    .select(['hour_start', 'sent', 'delivered', 'clicked', 'failed', 'subscribed', 'unsubscribed'])
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
  }));
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

export async function activeSubscriberCount(db: Db, siteId: string): Promise<number> {
  const row = await db.selectFrom('sites').select('active_subscriber_count').where('id', '=', siteId).executeTakeFirst();
  return Number(row?.active_subscriber_count ?? 0);
}

/** True once anything was ever sent, delivered or clicked for the site. */
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
  return row !== undefined;
}

export type SentNotification = Pick<NotificationRow, 'id' | 'title' | 'message' | 'sent_at' | 'sent_count' | 'delivered_count' | 'clicked_count'>;

/**
 * The latest sent notifications of the site, newest first (index
 * notifications_site_sent). Drip steps are left out as on the notifications
 * list: they belong to their campaign.
 */
export async function latestSentNotifications(db: Db, siteId: string, limit: number): Promise<SentNotification[]> {
  const rows = await db
    .selectFrom('notifications')
    .select(['id', 'title', 'message', 'sent_at', 'sent_count', 'delivered_count', 'clicked_count'])
    .where('site_id', '=', siteId)
    .where('sent_at', 'is not', null)
    .where('source', '!=', 'campaign')
    .orderBy('sent_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    ...row,
    sent_at: row.sent_at === null ? null : Number(row.sent_at),
    sent_count: Number(row.sent_count),
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
