// TRIGGERED notifications (spec §2: "sent automatically from events configured
// in an Automation section"). An armed (status `scheduled`) triggered
// notification listens for one event name; each event about a subscriber
// creates one run aimed at that subscriber, due `delay_minutes` after the event.
import crypto from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database } from '../../db/schema';
import { insertRun } from '../../delivery/runs';
import type { ReceivedSiteEvent } from '../site-events/hooks';
import * as repo from './automation-repository';

const MINUTE_MS = 60_000;

/**
 * The dedupe key of one trigger firing. `eventKey` is the event's idempotency
 * key when it has one (so the same event delivered twice sends once) or its
 * own id. The subscriber is part of the key: one event about an external id
 * fires for each of that person's browsers, and one browser's idempotency key
 * can never suppress a send to another subscriber.
 */
export const triggerRunKey = (notificationId: string, subscriberId: string, eventKey: string) => `trigger:${notificationId}:${subscriberId}:${eventKey}`;


/**
 * Creates the runs an event causes, in the caller's transaction; returns how
 * many were created (0 for an event nobody listens for, or a repeat).
 */
export async function fireTriggers(db: Kysely<Database> | Transaction<Database>, kind: DatabaseKind, event: ReceivedSiteEvent): Promise<{ created: number; earliestDueAt: number | null }> {
  if (!event.subscriberIds.length) return { created: 0, earliestDueAt: null };
  const triggers = await repo.findArmedTriggers(db, kind, event.siteId, event.eventName);
  let created = 0;
  let earliestDueAt: number | null = null;
  for (const trigger of triggers) {
    const dueAt = event.receivedAt + trigger.delayMinutes * MINUTE_MS;
    for (const subscriberId of event.subscriberIds) {
      const inserted = await insertRun(db, {
        id: crypto.randomUUID(),
        notification_id: trigger.notificationId,
        site_id: event.siteId,
        dedupe_key: triggerRunKey(trigger.notificationId, subscriberId, event.eventKey),
        due_at: dueAt,
        // The audience is this one subscriber, still active when the run is due and, with a segment, matching it.
        segment_id: trigger.segmentId,
        subscriber_id: subscriberId,
        created_at: event.receivedAt,
      });
      if (!inserted) continue;
      created += 1;
      earliestDueAt = earliestDueAt === null ? dueAt : Math.min(earliestDueAt, dueAt);
    }
  }
  return { created, earliestDueAt };
}
