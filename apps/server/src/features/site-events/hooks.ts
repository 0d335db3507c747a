import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';

/**
 * "An event about subscribers was received": the hook point for what events
 * cause, first of all triggered notifications (notifications/triggered.ts).
 * Wired at the composition root (runtime.ts), so site-events imports no
 * feature that acts on events.
 */
export interface ReceivedSiteEvent {
  siteId: string;
  eventName: string;
  /** Active subscribers of the site the event is about. */
  subscriberIds: readonly string[];
  /** The event's idempotency key when it has one (the same event twice sends once), else its own id. */
  eventKey: string;
  receivedAt: number;
}

/** Acts on an event inside the transaction that stored it; says how many sends it created and the earliest due. */
export type SiteEventHandler = (db: Kysely<Database> | Transaction<Database>, event: ReceivedSiteEvent) => Promise<{ created: number; earliestDueAt: number | null }>;

declare module '../../context' {
  interface AppContext {
    /** What a received site event causes (triggered notifications). */
    onSiteEvent: SiteEventHandler;
  }
}
