// Moving in and out, and the subscriber's privacy (docs/product.md,
// "Subscribers"): the audience as CSV (with the push keys when the site moves),
// everything held about one subscriber as JSON, and erasing a subscriber
// completely, from the dashboard or by external id with a site API key. All
// are the admin's, like removing a subscriber: it is personal data, and the
// keys let whoever has the site's VAPID private key push to those browsers.
import type { SubscriberDataExport, SubscriberErased, SubscribersExportQuery } from '@herald/contracts';
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context';
import type { Database, DeliveryStatus } from '../../db/schema';
import { pushServiceOf } from '../../delivery/push-services';
import { completeRunIfFinished } from '../../delivery/runs';
import { notFound } from '../../platform/errors';
import { iso, isoOrNull } from '../../platform/responses';
import { checkSiteRole } from '../../platform/site-roles';
import { addToHourlyStats, adjustActiveSubscriberCount } from '../analytics/site-counters';
import { recordAudit, type AuditActor } from '../audit-log/record';
import { addToCompacted } from '../retention/compacted';
import { requireSiteRole } from '../sites/service';
import { subscribersCsv } from './export-csv';
import { runSubscriberRemovedHooks } from './hooks';
import * as privacy from './privacy-repository';
import * as repo from './repository';
import { resolveSearch } from './search';
import { isDeadlock, subscriberFilters } from './service';

/** The API's outcome word for a delivery state (as in the notification report): a 404/410 ("gone") is "expired". */
const OUTCOME: Record<DeliveryStatus, string> = { pending: 'pending', sent: 'sent', failed: 'failed', gone: 'expired', skipped: 'skipped' };

/** The v1 erase takes the subscribers of an external id this many at a time, each in its own transaction. */
const ERASE_BATCH = 100;

interface Erasure extends SubscriberErased {
  /** Runs of other subscribers too that lost a pending delivery: finished now if that was their last. */
  touchedRunIds: string[];
}

export function createSubscriberPrivacy(ctx: AppContext) {
  const { db, clock } = ctx;

  /**
   * Deletes one subscriber and every row keyed by it, in one transaction, in
   * the order every counter writer takes rows (deliveries, subscribers, runs,
   * notifications, sites, stats_hourly). Counters keep their totals: pending
   * deliveries become skipped; an active subscriber leaves as an unsubscribe
   * does (active count −1, hourly unsubscribed +1). Undefined when the row was
   * gone already (a concurrent erase).
   */
  async function eraseInTransaction(trx: Transaction<Database>, subscriberId: string, actor: AuditActor): Promise<Erasure | undefined> {
    const row = await repo.findSubscriberById(trx, subscriberId);
    if (!row) return undefined;
    const now = clock.now();

    const pending = await privacy.deletePendingDeliveriesOf(trx, subscriberId);
    const done = await privacy.deleteDeliveriesOf(trx, subscriberId);
    const deliveries = pending.length + done.removed.length;
    // The notifications' counters keep these outcomes; so do their CSV reports and A/B figures, as after retention
    // (docs/storage.md, "Retention"). An accepted row names no push service: the endpoint says which it was.
    for (const removed of done.removed) removed.push_service ??= pushServiceOf(row.endpoint);
    await addToCompacted(trx, done.removed);

    const externalId = row.external_id !== null && !(await privacy.externalIdKeptByOthers(trx, row.site_id, row.external_id, subscriberId)) ? row.external_id : null;
    const events = await privacy.deleteEventsOf(trx, row.site_id, subscriberId, externalId);
    await privacy.deleteRowsKeyedBy(trx, row.site_id, subscriberId);
    const deleted = await privacy.deleteSubscriberRow(trx, subscriberId);
    if (!deleted) return undefined;

    const removedRuns = await privacy.deletePersonalRunsOf(trx, subscriberId);
    const personalRuns = new Set(removedRuns.map((run) => run.id));
    const removedRunsByNotification = new Map<string, number>();
    for (const run of removedRuns) removedRunsByNotification.set(run.notification_id, (removedRunsByNotification.get(run.notification_id) ?? 0) + 1);
    await privacy.clearFinishedFanoutCursors(trx, [...new Set([...pending.map((delivery) => delivery.run_id), ...done.runIds])].filter((id) => !personalRuns.has(id)), subscriberId);
    const skippedByRun = new Map<string, number>();
    const skippedByNotification = new Map<string, number>();
    for (const delivery of pending) {
      if (!personalRuns.has(delivery.run_id)) skippedByRun.set(delivery.run_id, (skippedByRun.get(delivery.run_id) ?? 0) + 1);
      skippedByNotification.set(delivery.notification_id, (skippedByNotification.get(delivery.notification_id) ?? 0) + 1);
    }
    await privacy.addSkipped(trx, skippedByRun, skippedByNotification, removedRunsByNotification);

    if (deleted.is_active === 1) {
      await adjustActiveSubscriberCount(trx, row.site_id, -1);
      await addToHourlyStats(trx, row.site_id, now, { unsubscribed: 1 });
    }
    // Erased is removed: webhooks are told (an id only), whether or not it was still active.
    await runSubscriberRemovedHooks(ctx.subscriberRemovedHooks, trx, { subscriberId, siteId: row.site_id, cause: 'removed', removedAt: now, erased: true });
    // No label: the entry outlives the subscriber and must not carry its data.
    await recordAudit(ctx, { siteId: row.site_id, actor, action: 'deleted', subject: { type: 'subscriber', id: subscriberId }, detail: { erased: true, deliveries, events } }, trx);
    return { id: subscriberId, deliveries, events, touchedRunIds: [...skippedByRun.keys()] };
  }

  async function erase(subscriberId: string, actor: AuditActor): Promise<SubscriberErased | undefined> {
    const attempt = () => db.transaction().execute((trx) => eraseInTransaction(trx, subscriberId, actor));
    let erasure: Erasure | undefined;
    try {
      erasure = await attempt();
    } catch (error) {
      // PostgreSQL only: a delivery worker recording results for the same rows; the retry sees its commit.
      if (!isDeadlock(error)) throw error;
      erasure = await attempt();
    }
    if (!erasure) return undefined;
    // A send whose last pending delivery was this subscriber's finishes now, not at the recovery sweep.
    for (const runId of await privacy.sendingRunIds(db, erasure.touchedRunIds)) await completeRunIfFinished(db, ctx.dbKind, runId, clock.now(), ctx.deliveryPorts.runFinished);
    return { id: erasure.id, deliveries: erasure.deliveries, events: erasure.events };
  }

  return {
    /**
     * The site's subscribers as CSV, with the list's filters; the push keys
     * and the site's VAPID public key only with `include_keys`. Logged when
     * the download starts (the file is streamed, its length unknown then).
     */
    async exportCsv(userId: string, siteId: string, query: SubscribersExportQuery): Promise<{ fileName: string; lines: AsyncGenerator<string> }> {
      const site = await requireSiteRole(ctx, userId, siteId, 'admin');
      const includeKeys = query.include_keys === true;
      const filters = await resolveSearch(db, siteId, subscriberFilters(query));
      const detail = {
        export: 'subscribers',
        include_keys: includeKeys,
        ...(query.is_active !== undefined ? { is_active: query.is_active } : {}),
        ...(filters.search ? { search: filters.search } : {}),
      };
      await recordAudit(ctx, { siteId, actor: { userId }, action: 'export_run', subject: { type: 'subscriber', id: null }, detail });
      return {
        fileName: `herald-subscribers-${site.id}${includeKeys ? '-with-keys' : ''}.csv`,
        lines: subscribersCsv(db, { siteId, vapidPublicKey: site.vapid_public_key, filters, includeKeys }),
      };
    },

    /** Everything Herald holds about one subscriber (a data subject's access request); the export is logged. */
    async exportData(userId: string, subscriberId: string): Promise<SubscriberDataExport> {
      const row = checkSiteRole(await repo.findSubscriberOfUser(db, userId, subscriberId), 'admin', 'Subscriber');
      const [site, tags, events, deliveries, runs, enrollments] = await Promise.all([
        privacy.siteOf(db, row.site_id),
        privacy.tagsOf(db, row.id),
        privacy.eventsOf(db, row.site_id, row.id, row.external_id),
        privacy.deliveriesOf(db, row.id),
        privacy.personalRunsOf(db, row.id),
        privacy.enrollmentsOf(db, row.id),
      ]);
      await recordAudit(ctx, { siteId: row.site_id, actor: { userId }, action: 'export_run', subject: { type: 'subscriber', id: row.id }, detail: { export: 'subscriber_data' } });
      return {
        exported_at: iso(clock.now()),
        site: { id: row.site_id, name: site.name, url: site.url },
        subscriber: {
          id: row.id,
          endpoint: row.endpoint,
          p256dh: row.p256dh,
          auth: row.auth,
          browser: row.browser,
          os: row.os,
          country: row.country,
          language: row.language,
          timezone: row.timezone,
          user_agent: row.user_agent,
          external_id: row.external_id,
          external_id_verified: row.external_id_verified === 1,
          is_active: row.is_active === 1,
          test_device: row.test_device === 1,
          test_device_name: row.test_device_name,
          subscribed_at: iso(row.subscribed_at),
          last_seen_at: isoOrNull(row.last_seen_at),
          last_delivered_at: isoOrNull(row.last_delivered_at),
          // The subscriber row keeps what retention compacted; the rows still here may be later.
          last_sent_at: isoOrNull(latestOf(row.last_sent_at, deliveries.map((delivery) => delivery.sent_at))),
          last_clicked_at: isoOrNull(latestOf(row.last_clicked_at, deliveries.map((delivery) => delivery.clicked_at))),
          unsubscribed_at: isoOrNull(row.unsubscribed_at),
          updated_at: iso(row.updated_at),
        },
        tags: tags.map((tag) => tag.tag),
        events: events.map((event) => ({
          id: event.id,
          event: event.name,
          source: event.source,
          external_id: event.external_id,
          data: event.data ? (JSON.parse(event.data) as Record<string, unknown>) : null,
          idempotency_key: event.idempotency_key,
          received_at: iso(event.received_at),
        })),
        deliveries: deliveries.map((delivery) => ({
          notification_id: delivery.notification_id,
          notification_title: delivery.notification_title,
          run_id: delivery.run_id,
          outcome: OUTCOME[delivery.status],
          reason: delivery.reason,
          attempts: delivery.attempts,
          created_at: iso(delivery.created_at),
          sent_at: isoOrNull(delivery.sent_at),
          delivered_at: isoOrNull(delivery.delivered_at),
          clicked_at: isoOrNull(delivery.clicked_at),
        })),
        personal_sends: runs.map((run) => ({ run_id: run.id, notification_id: run.notification_id, status: run.status, due_at: iso(run.due_at) })),
        welcome_campaigns: enrollments.map((enrollment) => ({ campaign_id: enrollment.campaign_id, enrolled_at: iso(enrollment.enrolled_at) })),
      };
    },

    /** DELETE /subscribers/{id}?erase=true: admin or higher, as for removing. */
    async eraseAsUser(userId: string, subscriberId: string): Promise<SubscriberErased> {
      const row = checkSiteRole(await repo.findSubscriberOfUser(db, userId, subscriberId), 'admin', 'Subscriber');
      const erased = await erase(row.id, { userId });
      if (!erased) throw notFound('Subscriber');
      return erased;
    },

    /**
     * v1: erases every subscriber of the site with this external id (active or
     * not, verified or not), then every event addressed to it. Answers how
     * many were erased; none is not an error, so a repeated request is harmless.
     */
    async eraseByExternalId(siteId: string, externalId: string, apiKeyId: string): Promise<number> {
      let erased = 0;
      for (;;) {
        const ids = await privacy.subscriberIdsWithExternalId(db, siteId, externalId, ERASE_BATCH);
        for (const id of ids) if (await erase(id, { apiKeyId })) erased += 1;
        if (ids.length < ERASE_BATCH) break;
      }
      await privacy.deleteEventsOfExternalId(db, siteId, externalId);
      return erased;
    },
  };
}

export type SubscriberPrivacy = ReturnType<typeof createSubscriberPrivacy>;

/** The latest of a kept time and the times of the remaining rows; null when none. */
function latestOf(kept: number | null, times: ReadonlyArray<number | null>): number | null {
  let latest = kept;
  for (const at of times) if (at !== null && (latest === null || at > latest)) latest = at;
  return latest;
}
