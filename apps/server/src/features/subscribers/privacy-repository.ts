// The SQL of erasing a subscriber and of exporting what Herald holds about one
// (privacy.ts). Every table with a row keyed by a subscriber is named here:
// deliveries, subscriber_tags, welcome_campaign_enrollments, site_events,
// test_device_links, the runs made for one subscriber, and the row itself.
// Counters (runs, notifications, sites, stats_hourly and the failure groups)
// are totals and are never decremented.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';
import { subscriberSeqOf } from '../../db/subscriber-seq';
import type { RemovedDelivery } from '../retention/compacted';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Deletes the subscriber's deliveries still waiting to be sent, returning the
 * run and notification of each: the caller counts them as skipped, as the
 * engine would have had it found the subscriber gone. On PostgreSQL a row a
 * worker is recording right now is waited for and, once no longer pending,
 * left to deleteDeliveriesOf: counted once either way.
 */
export function deletePendingDeliveriesOf(db: Db, subscriberId: string): Promise<Array<{ run_id: string; notification_id: string }>> {
  return db
    .deleteFrom('deliveries')
    .where('subscriber_seq', '=', subscriberSeqOf(subscriberId))
    .where('status', '=', 'pending')
    .returning((eb) => {
      // A delivery row names only its run, by number (migrations 0034, 0035).
      const ofRun = eb.selectFrom('notification_runs').whereRef('notification_runs.seq', '=', 'deliveries.run_seq');
      return [ofRun.select('notification_runs.id').$asScalar().as('run_id'), ofRun.select('notification_runs.notification_id').$asScalar().as('notification_id')];
    })
    .execute();
}

/**
 * Deletes the rest of its deliveries (index deliveries_subscriber_status_sent);
 * returns them, with their notifications, for the compacted groups, and the
 * runs they were of.
 */
export async function deleteDeliveriesOf(db: Db, subscriberId: string): Promise<{ removed: RemovedDelivery[]; runIds: string[] }> {
  const runs = await db
    .selectFrom('notification_runs')
    .select(['id', 'seq', 'notification_id'])
    .where('seq', 'in', (eb) => eb.selectFrom('deliveries').select('deliveries.run_seq').where('deliveries.subscriber_seq', '=', subscriberSeqOf(subscriberId)))
    .execute();
  const notificationOfRun = new Map(runs.map((run) => [Number(run.seq), run.notification_id]));
  const rows = await db
    .deleteFrom('deliveries')
    .where('subscriber_seq', '=', subscriberSeqOf(subscriberId))
    .returning(['run_seq', 'subscriber_seq', 'status', 'reason', 'push_service', 'variant_index', 'sent_at', 'delivered_at', 'clicked_at'])
    .execute();
  const removed = rows.map(({ run_seq, ...row }) => ({ ...row, subscriber_seq: Number(row.subscriber_seq), notification_id: notificationOfRun.get(Number(run_seq))! }));
  return { removed, runIds: runs.map((row) => row.id) };
}

/**
 * A finished fan-out keeps the last subscriber id it reached as its cursor
 * (delivery/fan-out.ts reads it only while the fan-out is under way). That
 * subscriber had a delivery in the run, so only the runs of its deliveries can
 * name it. A fan-out still under way keeps it: it is only the position to go
 * on from (`id > cursor`), and the next page replaces it.
 */
export async function clearFinishedFanoutCursors(db: Db, runIds: string[], subscriberId: string): Promise<void> {
  for (let i = 0; i < runIds.length; i += 500) {
    await db
      .updateTable('notification_runs')
      .set({ fanout_cursor: null })
      .where('id', 'in', runIds.slice(i, i + 500))
      .where('fanout_cursor', '=', subscriberId)
      .where('fanout_done', '=', 1)
      .execute();
  }
}

/** Sends made for this subscriber alone (triggered notifications, welcome steps); their dedupe keys name it. */
export function deletePersonalRunsOf(db: Db, subscriberId: string): Promise<Array<{ id: string; notification_id: string }>> {
  return db.deleteFrom('notification_runs').where('subscriber_id', '=', subscriberId).returning(['id', 'notification_id']).execute();
}

/** Whether another subscriber of the site still carries the external id (then events about that id stay: they are that person's other browsers'). */
export async function externalIdKeptByOthers(db: Db, siteId: string, externalId: string, subscriberId: string): Promise<boolean> {
  const row = await db
    .selectFrom('subscribers')
    .select('id')
    .where('site_id', '=', siteId)
    .where('external_id', '=', externalId)
    .where('id', '!=', subscriberId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Events about the subscriber, and (when `externalId` is given) events addressed to that external id; returns how many. */
export async function deleteEventsOf(db: Db, siteId: string, subscriberId: string, externalId: string | null): Promise<number> {
  const result = await db
    .deleteFrom('site_events')
    .where('site_id', '=', siteId)
    .where((eb) => eb.or([eb('subscriber_id', '=', subscriberId), ...(externalId === null ? [] : [eb('external_id', '=', externalId)])]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Events addressed to an external id, whoever they named (the v1 erase by external id). */
export async function deleteEventsOfExternalId(db: Db, siteId: string, externalId: string): Promise<number> {
  const result = await db.deleteFrom('site_events').where('site_id', '=', siteId).where('external_id', '=', externalId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Tags, welcome-campaign enrolments and the test-device link it claimed (tags and enrolments also cascade; deleted here on every engine). */
export async function deleteRowsKeyedBy(db: Db, siteId: string, subscriberId: string): Promise<void> {
  await db.deleteFrom('subscriber_tags').where('subscriber_id', '=', subscriberId).execute();
  await db.deleteFrom('welcome_campaign_enrollments').where('subscriber_id', '=', subscriberId).execute();
  await db.deleteFrom('test_device_links').where('site_id', '=', siteId).where('subscriber_id', '=', subscriberId).execute();
}

/** Deletes the subscriber's row; whether it was active then (read under the row lock), or undefined when it was already gone. */
export async function deleteSubscriberRow(db: Db, subscriberId: string): Promise<{ is_active: number } | undefined> {
  return db.deleteFrom('subscribers').where('id', '=', subscriberId).returning('is_active').executeTakeFirst();
}

/**
 * Counts deliveries that will never be sent as skipped on their runs and
 * notifications, so targeted = sent + failed + expired + skipped + pending
 * still adds up after their rows are gone. Rows are taken in id order, runs
 * before notifications, as every counter writer does (delivery/runs.ts).
 */
/**
 * What an erasure changes in the counts: deliveries skipped per run and per
 * notification, and per notification the runs made for the subscriber that
 * went with it, added to `removed_run_count` as retention adds the runs it
 * removes, so "fired N times" stays what it was (docs/storage.md, "Retention").
 */
export async function addSkipped(db: Db, runs: ReadonlyMap<string, number>, notifications: ReadonlyMap<string, number>, removedRuns: ReadonlyMap<string, number>): Promise<void> {
  for (const [runId, count] of [...runs].sort(([a], [b]) => a.localeCompare(b))) {
    await db
      .updateTable('notification_runs')
      .set((eb) => ({ skipped_count: eb('skipped_count', '+', count) }))
      .where('id', '=', runId)
      .execute();
  }
  for (const notificationId of [...new Set([...notifications.keys(), ...removedRuns.keys()])].sort((a, b) => a.localeCompare(b))) {
    const skipped = notifications.get(notificationId) ?? 0;
    const removed = removedRuns.get(notificationId) ?? 0;
    await db
      .updateTable('notifications')
      .set((eb) => ({ skipped_count: eb('skipped_count', '+', skipped), removed_run_count: eb('removed_run_count', '+', removed) }))
      .where('id', '=', notificationId)
      .execute();
  }
}

/** Of these runs, those still sending: the erase may have removed their last pending delivery. */
export async function sendingRunIds(db: Db, runIds: string[]): Promise<string[]> {
  if (!runIds.length) return [];
  const rows = await db.selectFrom('notification_runs').select('id').where('id', 'in', runIds).where('status', '=', 'sending').execute();
  return rows.map((row) => row.id);
}

/** Up to `limit` subscribers of the site with this external id, active or not, verified or not. */
export async function subscriberIdsWithExternalId(db: Db, siteId: string, externalId: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('subscribers').select('id').where('site_id', '=', siteId).where('external_id', '=', externalId).orderBy('id').limit(limit).execute();
  return rows.map((row) => row.id);
}

// ---------------------------------------------------------------------------
// One subscriber's data (GET /subscribers/{id}/export).

export function siteOf(db: Db, siteId: string): Promise<{ name: string; url: string }> {
  return db.selectFrom('sites').select(['name', 'url']).where('id', '=', siteId).executeTakeFirstOrThrow();
}

export function tagsOf(db: Db, subscriberId: string): Promise<Array<{ tag: string }>> {
  return db.selectFrom('subscriber_tags').select('tag').where('subscriber_id', '=', subscriberId).orderBy('tag').execute();
}

/** Events about the subscriber, and those addressed to its external id that named no single subscriber; newest first. */
export function eventsOf(db: Db, siteId: string, subscriberId: string, externalId: string | null) {
  return db
    .selectFrom('site_events')
    .select(['id', 'name', 'source', 'external_id', 'data', 'idempotency_key', 'received_at'])
    .where('site_id', '=', siteId)
    .where((eb) =>
      eb.or([
        eb('subscriber_id', '=', subscriberId),
        ...(externalId === null ? [] : [eb.and([eb('subscriber_id', 'is', null), eb('external_id', '=', externalId)])]),
      ]),
    )
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Every delivery to the subscriber with its notification's title, newest first. */
export function deliveriesOf(db: Db, subscriberId: string) {
  return db
    .selectFrom('deliveries')
    .innerJoin('notification_runs', 'notification_runs.seq', 'deliveries.run_seq')
    .leftJoin('notifications', 'notifications.id', 'notification_runs.notification_id')
    .select([
      'deliveries.id',
      'notification_runs.notification_id',
      'notifications.title as notification_title',
      'notification_runs.id as run_id',
      'deliveries.status',
      'deliveries.reason',
      'deliveries.attempts',
      'deliveries.created_at',
      'deliveries.sent_at',
      'deliveries.delivered_at',
      'deliveries.clicked_at',
    ])
    .where('deliveries.subscriber_seq', '=', subscriberSeqOf(subscriberId))
    .orderBy('deliveries.created_at', 'desc')
    .orderBy('deliveries.id', 'desc')
    .execute();
}

/** Runs made for this subscriber alone (index notification_runs_subscriber_due), newest first. */
export function personalRunsOf(db: Db, subscriberId: string) {
  return db.selectFrom('notification_runs').select(['id', 'notification_id', 'status', 'due_at']).where('subscriber_id', '=', subscriberId).orderBy('due_at', 'desc').orderBy('id').execute();
}

export function enrollmentsOf(db: Db, subscriberId: string) {
  return db.selectFrom('welcome_campaign_enrollments').select(['campaign_id', 'enrolled_at']).where('subscriber_id', '=', subscriberId).orderBy('enrolled_at').execute();
}
