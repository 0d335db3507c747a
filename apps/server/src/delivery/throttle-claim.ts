// The worker's side of throttled sends (docs/delivery.md, "Throttled sends";
// the scheduler's side, granting each minute its places, is throttle.ts).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema';
import type { ClaimedDeliveryRow } from './runs';

type Db = Kysely<Database> | Transaction<Database>;

/** One minute: the unit the throttle counts in. */
export const THROTTLE_WINDOW_MS = 60_000;

/**
 * Claims the deliveries of a throttled run for sending: like claimDeliveries
 * (runs.ts), and only those granted a minute that is still running. The
 * grant is used up by the claim: a retry, or a delivery whose worker died,
 * waits for a place in a later minute.
 */
export async function claimGrantedDeliveries(db: Db, ids: number[], now: number, leaseMs: number): Promise<ClaimedDeliveryRow[]> {
  if (!ids.length) return [];
  return db
    .updateTable('deliveries')
    .set((eb) => ({ lease_until: now + leaseMs, next_attempt_at: null, throttle_window: null, attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
    .where('throttle_window', 'is not', null)
    .where('throttle_window', '<=', now)
    .where('throttle_window', '>', now - THROTTLE_WINDOW_MS)
    .returning(['id', 'subscriber_id', 'attempts', 'variant_index'])
    .execute();
}
