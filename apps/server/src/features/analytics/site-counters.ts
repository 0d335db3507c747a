// The site-level counters every writer adds to in the same transaction as the
// change it counts: the hourly rollup (stats_hourly), which the dashboard reads
// instead of raw deliveries, and sites.active_subscriber_count. Other features
// (subscribers, and the delivery engine through its SiteCounters port) write
// here; analytics reads.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import { inKeyOrder } from '../../db/lock-order';
import type { Database } from '../../db/schema';
import type { DeliveryHealthEntry } from '../../delivery/ports';

type Db = Kysely<Database> | Transaction<Database>;

export type HourlyCounter = 'sent' | 'delivered' | 'clicked' | 'failed' | 'subscribed' | 'unsubscribed' | 'lost_at_push_service';

export const HOUR_MS = 3_600_000;

export function hourStart(millis: number): number {
  return Math.floor(millis / HOUR_MS) * HOUR_MS;
}

/**
 * Adds to a site's hourly rollup (UTC hours). The dashboard reads only these
 * rows, never the raw deliveries, so its cost does not grow with the audience.
 * Called in the same transaction as the change it counts.
 */
export async function addToHourlyStats(db: Db, siteId: string, at: number, increments: Partial<Record<HourlyCounter, number>>): Promise<void> {
  const entries = Object.entries(increments).filter(([, n]) => n) as Array<[HourlyCounter, number]>;
  if (!entries.length) return;
  const values = Object.fromEntries(entries);
  await db
    .insertInto('stats_hourly')
    .values({ site_id: siteId, hour_start: hourStart(at), ...values })
    .onConflict((oc) =>
      oc.columns(['site_id', 'hour_start']).doUpdateSet((eb) =>
        Object.fromEntries(entries.map(([column]) => [column, eb(`stats_hourly.${column}`, '+', eb.ref(`excluded.${column}`))])),
      ),
    )
    .execute();
}

/** sites.active_subscriber_count: exact, so "active subscribers" is never counted row by row (the dashboard, the subscribers list's totals, segment counts). */
export async function readActiveSubscriberCount(db: Db, siteId: string): Promise<number> {
  const row = await db.selectFrom('sites').select('active_subscriber_count').where('id', '=', siteId).executeTakeFirst();
  return Number(row?.active_subscriber_count ?? 0);
}

/** sites.active_subscriber_count follows every real change of active state, in the same transaction. */
export async function adjustActiveSubscriberCount(db: Db, siteId: string, delta: number): Promise<void> {
  await db
    .updateTable('sites')
    .set({ active_subscriber_count: sql<number>`active_subscriber_count + ${delta}` })
    .where('id', '=', siteId)
    .execute();
}

/**
 * adjustActiveSubscriberCount for several sites, in one statement whatever
 * their number (a subscribe batch spans many sites on a shared server). On
 * PostgreSQL the statement's subquery locks the rows in id order (its
 * LockRows runs over the sorted ids before the update joins them), the order
 * every writer of sites rows follows, so two batches cannot deadlock on
 * them; SQLite has one writer at a time. `deltas` need not be sorted; zero
 * deltas are skipped.
 */
export async function adjustActiveSubscriberCounts(db: Db, kind: DatabaseKind, deltas: ReadonlyArray<{ siteId: string; delta: number }>): Promise<void> {
  const changes = inKeyOrder(
    deltas.filter((change) => change.delta !== 0),
    (change) => [change.siteId],
  );
  if (!changes.length) return;
  if (changes.length === 1) return adjustActiveSubscriberCount(db, changes[0]!.siteId, changes[0]!.delta);
  const ids = changes.map((change) => change.siteId);
  const byId = sql.join(changes.map((change) => sql`when ${change.siteId} then ${change.delta}`), sql` `);
  const increment = { active_subscriber_count: sql<number>`sites.active_subscriber_count + (case sites.id ${byId} else 0 end)` };
  if (kind === 'postgres') {
    const locked = db.selectFrom('sites').select('id').where('id', 'in', ids).orderBy('id').forNoKeyUpdate().as('locked');
    await db.updateTable('sites').from(locked).set(increment).whereRef('sites.id', '=', 'locked.id').execute();
    return;
  }
  await db.updateTable('sites').set(increment).where('id', 'in', ids).execute();
}

/**
 * addToHourlyStats for several (site, hour) rows adding to the same one
 * counter, in one statement: an upsert of all the rows, in key order (the
 * order PostgreSQL takes their locks in; see adjustActiveSubscriberCounts).
 */
export async function addToHourlyStatsOfSites(db: Db, counter: HourlyCounter, rows: ReadonlyArray<{ siteId: string; at: number; count: number }>): Promise<void> {
  const values = inKeyOrder(
    rows.filter((row) => row.count !== 0).map((row) => ({ site_id: row.siteId, hour_start: hourStart(row.at), [counter]: row.count })),
    (row) => [row.site_id, row.hour_start],
  );
  if (!values.length) return;
  await db
    .insertInto('stats_hourly')
    .values(values)
    .onConflict((oc) => oc.columns(['site_id', 'hour_start']).doUpdateSet((eb) => ({ [counter]: eb(`stats_hourly.${counter}`, '+', eb.ref(`excluded.${counter}`)) })))
    .execute();
}

/**
 * The delivery engine's SiteCounters port: what a send or a beacon adds to its
 * site. Subscribers a push service reported gone leave the active count.
 * sites before stats_hourly: the row order every writer follows (delivery/run-counters.ts).
 */
export async function addSendToSiteCounters(
  db: Db,
  siteId: string,
  at: number,
  counters: Partial<Record<'sent' | 'failed' | 'delivered' | 'clicked' | 'unsubscribed' | 'lost_at_push_service', number>>,
): Promise<void> {
  if (counters.unsubscribed) await adjustActiveSubscriberCount(db, siteId, -counters.unsubscribed);
  await addToHourlyStats(db, siteId, at, counters);
}

/**
 * Adds to a prompt type's hourly counts: prompts the SDK reported shown, and
 * subscriptions that came from that prompt (subscriber analytics: conversion).
 */
export async function addToPromptStats(db: Db, siteId: string, at: number, prompt: string, increments: Partial<Record<'shown' | 'subscribed', number>>): Promise<void> {
  const entries = Object.entries(increments).filter(([, n]) => n) as Array<['shown' | 'subscribed', number]>;
  if (!entries.length) return;
  await db
    .insertInto('prompt_stats')
    .values({ site_id: siteId, hour_start: hourStart(at), prompt, ...Object.fromEntries(entries) })
    .onConflict((oc) =>
      oc.columns(['site_id', 'hour_start', 'prompt']).doUpdateSet((eb) =>
        Object.fromEntries(entries.map(([column]) => [column, eb(`prompt_stats.${column}`, '+', eb.ref(`excluded.${column}`))])),
      ),
    )
    .execute();
}

/** addToPromptStats for several (site, hour, prompt) rows of conversions, in one upsert in key order. */
export async function addSubscribedToPromptStats(db: Db, rows: ReadonlyArray<{ siteId: string; at: number; prompt: string; count: number }>): Promise<void> {
  const values = inKeyOrder(
    rows.filter((row) => row.count !== 0).map((row) => ({ site_id: row.siteId, hour_start: hourStart(row.at), prompt: row.prompt, subscribed: row.count })),
    (row) => [row.site_id, row.hour_start, row.prompt],
  );
  if (!values.length) return;
  await db
    .insertInto('prompt_stats')
    .values(values)
    .onConflict((oc) => oc.columns(['site_id', 'hour_start', 'prompt']).doUpdateSet((eb) => ({ subscribed: eb('prompt_stats.subscribed', '+', eb.ref('excluded.subscribed')) })))
    .execute();
}

/**
 * Upper bounds (ms) of the buckets the time from due to accepted is counted
 * in; the last bucket holds everything slower. A median read from these is
 * "at most the bucket's bound": exact enough to tell seconds from minutes
 * from hours, and it costs one row per bucket instead of one per delivery.
 */
export const LATENCY_BUCKET_UPPER_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 86_400_000] as const;

/** The bucket of a latency: 1 for ≤ 1 s … LATENCY_BUCKET_UPPER_MS.length + 1 for over a day (0 is "not accepted"). */
export function latencyBucket(latencyMs: number): number {
  const index = LATENCY_BUCKET_UPPER_MS.findIndex((upper) => latencyMs <= upper);
  return (index < 0 ? LATENCY_BUCKET_UPPER_MS.length : index) + 1;
}

/**
 * The delivery engine's AddToDeliveryHealth port: results of a send by push
 * service, outcome, reason and (accepted) latency bucket, added to the site's
 * hourly rows in the result transaction, after stats_hourly (the row order of
 * delivery/run-counters.ts). The dashboard's Delivery section reads only these rows.
 */
export async function addToDeliveryHealth(db: Db, siteId: string, at: number, entries: readonly DeliveryHealthEntry[]): Promise<void> {
  if (!entries.length) return;
  const groups = new Map<string, { push_service: DeliveryHealthEntry['pushService']; outcome: DeliveryHealthEntry['outcome']; reason: string; latency_bucket: number; count: number }>();
  for (const entry of entries) {
    const reason = entry.outcome === 'failed' ? (entry.reason ?? 'rejected') : '';
    const bucket = entry.outcome === 'accepted' ? latencyBucket(entry.latencyMs ?? 0) : 0;
    const key = `${entry.pushService} ${entry.outcome} ${reason} ${bucket}`;
    const group = groups.get(key) ?? { push_service: entry.pushService, outcome: entry.outcome, reason, latency_bucket: bucket, count: 0 };
    group.count += 1;
    groups.set(key, group);
  }
  const hour = hourStart(at);
  // One order for every writer: two transactions adding to the same rows never wait on each other crosswise.
  const ordered = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, group]) => group);
  await db
    .insertInto('delivery_stats_hourly')
    .values(ordered.map((group) => ({ site_id: siteId, hour_start: hour, ...group, reason: group.reason as never })))
    .onConflict((oc) =>
      oc
        .columns(['site_id', 'hour_start', 'push_service', 'outcome', 'reason', 'latency_bucket'])
        .doUpdateSet((eb) => ({ count: eb('delivery_stats_hourly.count', '+', eb.ref('excluded.count')) })),
    )
    .execute();
}
