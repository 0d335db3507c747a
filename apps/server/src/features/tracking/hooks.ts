import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema';

/**
 * "A notification was clicked": called once per counted click (a replayed
 * beacon is not counted again), inside the beacon's transaction, so what a
 * hook writes (webhooks' click tallies) commits with the count.
 */
export interface NotificationClickedEvent {
  siteId: string;
  notificationId: string;
  clickedAt: number;
}

export type NotificationClickedHook = (trx: Transaction<Database>, event: NotificationClickedEvent) => Promise<void>;

// Registered on the AppContext in runtime.ts, like the subscriber hooks.
declare module '../../context' {
  interface AppContext {
    notificationClickedHooks?: NotificationClickedHook[];
  }
}
