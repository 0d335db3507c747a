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
 *
 * A cancel racing the event (PostgreSQL): the runs are inserted first, then
 * the notifications' rows share-locked and re-read. A cancel changes that row
 * before it cancels the waiting runs (actions.ts, cancel), so either it waits
 * for this transaction and cancels these runs, or it went first and this
 * event cancels the runs it made for it. The lock is taken last: an insert
 * meeting a repeat's run that a send is updating waits for that send, which
 * may itself be waiting to add to the notification's counters.
 */
export async function fireTriggers(db: Kysely<Database> | Transaction<Database>, kind: DatabaseKind, event: ReceivedSiteEvent): Promise<{ created: number; earliestDueAt: number | null }> {
  if (!event.subscriberIds.length) return { created: 0, earliestDueAt: null };
  const triggers = await repo.findArmedTriggers(db, event.siteId, event.eventName);
  const createdRuns = new Map<string, string[]>();
  let earliestDueAt: number | null = null;
  for (const trigger of triggers) {
    const dueAt = event.receivedAt + trigger.delayMinutes * MINUTE_MS;
    for (const subscriberId of event.subscriberIds) {
      const runId = crypto.randomUUID();
      const inserted = await insertRun(db, {
        id: runId,
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
      createdRuns.set(trigger.notificationId, [...(createdRuns.get(trigger.notificationId) ?? []), runId]);
      earliestDueAt = earliestDueAt === null ? dueAt : Math.min(earliestDueAt, dueAt);
    }
  }
  if (kind === 'postgres' && createdRuns.size) {
    const stillArmed = await repo.lockArmedNotifications(db, [...createdRuns.keys()]);
    for (const [notificationId, runIds] of createdRuns) {
      if (stillArmed.has(notificationId)) continue;
      await repo.cancelRuns(db, runIds, event.receivedAt);
      createdRuns.delete(notificationId);
    }
  }
  const created = [...createdRuns.values()].reduce((sum, runIds) => sum + runIds.length, 0);
  return { created, earliestDueAt: created ? earliestDueAt : null };
}
