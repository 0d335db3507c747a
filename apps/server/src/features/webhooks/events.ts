// What Herald tells webhooks, and when (docs/product.md, "Webhooks"). Each
// event becomes one outbox row per webhook that wants it (webhook_deliveries),
// written where the change is written — in its transaction where the caller
// has one — so an event is never lost to a crash between the change and the
// send; the scheduler sends what is due (deliver.ts).
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context';
import type { Database, RunRow, WebhookDeliveriesTable } from '../../db/schema';
import { outcomeCountsOf } from '../../delivery/run-counters';
import { iso } from '../../platform/responses';
import type { SubscriberCreatedHook, SubscriberRemovedHook } from '../subscribers/hooks';
import type { NotificationClickedHook } from '../tracking/hooks';
import * as repo from './repository';
import { newMessageId } from './signing';

type Db = Kysely<Database> | Transaction<Database>;

/** The Standard Webhooks payload shape: `{type, timestamp, data}`. */
export function eventBody(type: string, at: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: iso(at), data });
}

/** The outbox row of one event for one webhook, due at once; every attempt sends its payload as it is. */
export function newOutboxRow(webhookId: string, type: string, at: number, data: Record<string, unknown>): Insertable<WebhookDeliveriesTable> {
  return { id: newMessageId(), webhook_id: webhookId, event_type: type, payload: eventBody(type, at, data), status: 'pending', attempts: 0, next_attempt_at: at, created_at: at, finished_at: null };
}

/**
 * One outbox row per webhook of the site that wants `type`; due now. Returns
 * how many. `data` may be a function: it is then called only when some
 * webhook wants the event (what it reads costs nothing otherwise).
 */
export async function emitWebhookEvent(db: Db, siteId: string, type: string, at: number, data: Record<string, unknown> | (() => Promise<Record<string, unknown>>)): Promise<number> {
  const targets = await repo.webhooksFor(db, siteId, type);
  if (!targets.length) return 0;
  const eventData = { site_id: siteId, ...(typeof data === 'function' ? await data() : data) };
  await repo.insertDeliveries(db, targets.map((target) => newOutboxRow(target.id, type, at, eventData)));
  return targets.length;
}

/**
 * subscriber.created: after the subscribers' batch committed (subscribers/hooks.ts).
 * The webhooks of the batch's sites are read once; one outbox row per
 * subscriber and webhook that wants the event.
 */
export function webhooksOnSubscriberCreated(ctx: Pick<AppContext, 'db' | 'wakeScheduler'>): SubscriberCreatedHook {
  const type = 'subscriber.created';
  return {
    // Most sites have no such webhook: the subscribe's own read tells which do.
    concerns: (siteId) => repo.hasWebhookFor(siteId, type),
    run: async (events) => {
      const targets = await repo.webhooksOfSitesFor(ctx.db, [...new Set(events.map((event) => event.siteId))], type);
      const rows = events.flatMap((event) =>
        (targets.get(event.siteId) ?? []).map((target) =>
          newOutboxRow(target.id, type, event.subscribedAt, { site_id: event.siteId, subscriber: { id: event.subscriberId, subscribed_at: iso(event.subscribedAt) } }),
        ),
      );
      if (!rows.length) return;
      await repo.insertDeliveries(ctx.db, rows);
      ctx.wakeScheduler();
    },
  };
}

/** subscriber.removed, in the transaction that deactivated or erased the subscriber. */
export const webhooksOnSubscriberRemoved: SubscriberRemovedHook = async (trx, event) => {
  await emitWebhookEvent(trx, event.siteId, 'subscriber.removed', event.removedAt, {
    subscriber: { id: event.subscriberId },
    cause: event.cause,
    ...(event.erased ? { erased: true } : {}),
    removed_at: iso(event.removedAt),
  });
};

/**
 * notification.completed / notification.failed, in the transaction that
 * gives the run its final status (delivery/ports.ts, RunFinished): one event
 * per run (a one-time send, a recurring occurrence, a trigger firing, a drip
 * step, a feed item), with its outcome counts.
 */
export async function webhooksOnRunFinished(trx: Transaction<Database>, run: RunRow, now: number): Promise<void> {
  const type = run.status === 'failed' ? 'notification.failed' : 'notification.completed';
  await emitWebhookEvent(trx, run.site_id, type, now, async () => {
    const notification = await repo.findNotificationSummary(trx, run.notification_id);
    return {
      notification: { id: run.notification_id, title: notification?.title ?? null, type: notification?.type ?? null, source: notification?.source ?? null },
      run: { id: run.id, status: run.status, started_at: run.started_at === null ? null : iso(run.started_at), finished_at: iso(now), error: run.last_error },
      counts: outcomeCountsOf(run),
    };
  });
}

/** Counted clicks add to the tally of each webhook that wants notification.clicked; the batch goes at most once a minute (deliver.ts). */
export const webhooksOnNotificationClicked: NotificationClickedHook = async (trx, event) => {
  for (const target of await repo.webhooksFor(trx, event.siteId, 'notification.clicked')) await repo.addClick(trx, target.id, event.notificationId, event.clicks);
};
