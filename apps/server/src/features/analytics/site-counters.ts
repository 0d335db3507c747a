// The site-level counters every writer adds to in the same transaction as the
// change it counts: the hourly rollup (stats_hourly), which the dashboard reads
// instead of raw deliveries, and sites.active_subscriber_count. Other features
// (subscribers, and the delivery engine through its SiteCounters port) write
// here; analytics reads.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export type HourlyCounter = 'sent' | 'delivered' | 'clicked' | 'failed' | 'subscribed' | 'unsubscribed';

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

/** sites.active_subscriber_count follows every real change of active state, in the same transaction. */
export async function adjustActiveSubscriberCount(db: Db, siteId: string, delta: number): Promise<void> {
  await db
    .updateTable('sites')
    .set({ active_subscriber_count: sql<number>`active_subscriber_count + ${delta}` })
    .where('id', '=', siteId)
    .execute();
}

/**
 * The delivery engine's SiteCounters port: what a send or a beacon adds to its
 * site. Subscribers a push service reported gone leave the active count.
 * sites before stats_hourly: the row order every writer follows (runs.ts).
 */
export async function addSendToSiteCounters(
  db: Db,
  siteId: string,
  at: number,
  counters: Partial<Record<'sent' | 'failed' | 'delivered' | 'clicked' | 'unsubscribed', number>>,
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
