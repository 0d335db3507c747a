import type { Kysely, Transaction } from 'kysely';
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
