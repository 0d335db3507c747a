import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema';

/**
 * "A notification was clicked": called by the fold (fold.ts) with the first
 * clicks of one notification it counts (a replayed beacon is not counted
 * again), inside the fold's transaction, so what a hook writes (webhooks'
 * click tallies) commits with the count: every counted click reaches the
 * hooks exactly once.
 */
export interface NotificationClickedEvent {
  siteId: string;
  notificationId: string;
  /** First clicks of the notification counted in this fold (≥ 1). */
  clicks: number;
}

export type NotificationClickedHook = (trx: Transaction<Database>, event: NotificationClickedEvent) => Promise<void>;

// Registered on the AppContext in runtime.ts, like the subscriber hooks.
declare module '../../context' {
  interface AppContext {
    notificationClickedHooks?: NotificationClickedHook[];
  }
}
