// SQL of the segments feature.
import type { SegmentRules } from '@herald/contracts';
import { sql, type Insertable, type Kysely, type SqlBool, type Transaction, type Updateable } from 'kysely';
import { SAMPLE_PREDICATE } from '../../db/migrations/0030_subscriber_search_and_sample';
import { membershipsOf } from '../../db/membership';
import type { Database, SegmentRow, SegmentsTable } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';
import { readActiveSubscriberCount } from '../analytics/site-counters';
import type { SegmentUse } from './segment-uses';
import { applySegmentRules, hasRules } from './segment-rules';

type Db = Kysely<Database> | Transaction<Database>;

/** The segment if it belongs to one of the user's sites (else undefined: the caller answers 404). */
export function findSegmentOfUser(db: Db, userId: string, segmentId: string): Promise<(SegmentRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('segments')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'segments.site_id')
    .selectAll('segments')
    .select('membership.role as member_role')
    .where('segments.id', '=', segmentId)
    .executeTakeFirst();
}

/** The segment if it belongs to the site; a segment of another site is as good as missing. */
export function findSegmentOfSite(db: Db, siteId: string, segmentId: string): Promise<SegmentRow | undefined> {
  return db.selectFrom('segments').selectAll().where('id', '=', segmentId).where('site_id', '=', siteId).executeTakeFirst();
}

/** A site's segments, newest first (as the notifications list). */
export function listSegmentsOfSite(db: Db, siteId: string, limit: number): Promise<SegmentRow[]> {
  return db.selectFrom('segments').selectAll().where('site_id', '=', siteId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function countSegmentsOfSite(db: Db, siteId: string): Promise<number> {
  const row = await db
    .selectFrom('segments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertSegment(db: Db, row: Insertable<SegmentsTable>): Promise<void> {
  await db.insertInto('segments').values(row).execute();
}

export async function updateSegment(db: Db, segmentId: string, changes: Updateable<SegmentsTable>): Promise<void> {
  await db.updateTable('segments').set(changes).where('id', '=', segmentId).execute();
}

export async function deleteSegment(db: Db, segmentId: string): Promise<void> {
  await db.deleteFrom('segments').where('id', '=', segmentId).execute();
}

/**
 * Ids of a site's active subscribers after `afterId`, ascending: all of them,
 * the one `subscriberId` names, and only those matching `rules` (evaluated at
 * `rulesAt`) when given. The audience of a send (audience.ts).
 */
export async function selectActiveSubscribers(
  db: Db,
  filter: { siteId: string; subscriberId: string | null; rules: SegmentRules | undefined; rulesAt: number; afterId: string | null; limit: number; zones?: Array<string | null> },
): Promise<Array<{ id: string; seq: number }>> {
  // With its number, for its delivery row (migration 0036); subscribers_site_active_id holds both.
  let query = db.selectFrom('subscribers').select(['subscribers.id', 'subscribers.seq']).where('subscribers.site_id', '=', filter.siteId).where('subscribers.is_active', '=', 1);
  if (filter.subscriberId) query = query.where('subscribers.id', '=', filter.subscriberId);
  if (filter.rules) query = applySegmentRules(query, filter.rules, filter.rulesAt);
  if (filter.zones) {
    // A run of a send split by zone (docs/delivery.md, "Local-time delivery"): only its zones; null is "no zone".
    const named = filter.zones.filter((zone): zone is string => zone !== null);
    const withoutZone = filter.zones.includes(null);
    query = query.where((eb) => eb.or([...(named.length ? [eb('subscribers.timezone', 'in', named)] : []), ...(withoutZone ? [eb('subscribers.timezone', 'is', null)] : []), eb.lit(false)]));
  }
  if (filter.afterId) query = query.where('subscribers.id', '>', filter.afterId);
  return query.orderBy('subscribers.id').limit(filter.limit).execute();
}

/** A run's audience counted by subscriber time zone (null: none given), to split a send by zone. */
export async function countActiveSubscribersByZone(
  db: Db,
  filter: { siteId: string; subscriberId: string | null; rules: SegmentRules | undefined; rulesAt: number },
): Promise<Array<{ zone: string | null; subscribers: number }>> {
  let query = db
    .selectFrom('subscribers')
    .select((eb) => ['subscribers.timezone', eb.fn.countAll<number>().as('n')])
    .where('subscribers.site_id', '=', filter.siteId)
    .where('subscribers.is_active', '=', 1);
  if (filter.subscriberId) query = query.where('subscribers.id', '=', filter.subscriberId);
  if (filter.rules) query = applySegmentRules(query, filter.rules, filter.rulesAt);
  const rows = await query.groupBy('subscribers.timezone').execute();
  return rows.map((row) => ({ zone: row.timezone, subscribers: Number(row.n) }));
}

/** The site's active subscribers in the fixed sample of about 1 in 85 (index subscribers_site_sample, migration 0030; sample-estimate.ts). */
function sampledActive(db: Db, siteId: string) {
  return db
    .selectFrom('subscribers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('subscribers.site_id', '=', siteId)
    .where('subscribers.is_active', '=', 1)
    .where(sql.raw<SqlBool>(SAMPLE_PREDICATE));
}

export async function countSampledActive(db: Db, siteId: string): Promise<number> {
  return Number((await sampledActive(db, siteId).executeTakeFirstOrThrow()).n);
}

/** The count of the sample's active subscribers matching the rules (exported for the plan test: tags read on their own sample index). */
export function sampledMatchingQuery(db: Db, siteId: string, rules: SegmentRules, now: number) {
  return applySegmentRules(sampledActive(db, siteId), rules, now, siteId);
}

export async function countSampledMatching(db: Db, siteId: string, rules: SegmentRules, now: number): Promise<number> {
  return Number((await sampledMatchingQuery(db, siteId, rules, now).executeTakeFirstOrThrow()).n);
}

/** Active subscribers of the site matching the rules at `now` (spec §3 estimated_count). */
export async function countMatchingSubscribers(db: Db, siteId: string, rules: SegmentRules, now: number): Promise<number> {
  // Everyone active: the site's exact counter, not a count of a million rows.
  if (!hasRules(rules)) return readActiveSubscriberCount(db, siteId);
  const query = db
    .selectFrom('subscribers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('subscribers.site_id', '=', siteId)
    .where('subscribers.is_active', '=', 1);
  const row = await applySegmentRules(query, rules, now).executeTakeFirstOrThrow();
  return Number(row.n);
}

const kindOfSource = (source: string) => (source === 'campaign' ? 'welcome campaign step' : 'notification');

/**
 * Notifications that may still send to the segment: all but finished
 * one-time sends. Recurring and triggered notifications send again later;
 * a welcome campaign's steps send to every future subscriber.
 */
export async function notificationsUsingSegment(db: Db, siteId: string, segmentId: string): Promise<SegmentUse[]> {
  const rows = await db
    .selectFrom('notifications')
    .select(['id', 'title', 'source'])
    .where('site_id', '=', siteId)
    .where('segment_id', '=', segmentId)
    .where((eb) =>
      eb.not(eb.and([eb('type', '=', 'ONE_TIME'), eb('source', '!=', 'campaign'), eb('status', 'in', ['completed', 'completed_with_errors', 'cancelled', 'failed'])])),
    )
    .orderBy('created_at')
    .limit(50)
    .execute();
  return rows.map((row) => ({ key: `notification:${row.id}`, kind: kindOfSource(row.source), name: row.title }));
}

/** Sends to the segment that are waiting or under way, whatever created them (a run carries its own segment). */
export async function runsUsingSegment(db: Db, siteId: string, segmentId: string): Promise<SegmentUse[]> {
  const rows = await db
    .selectFrom('notification_runs')
    .innerJoin('notifications', 'notifications.id', 'notification_runs.notification_id')
    .select(['notifications.id', 'notifications.title', 'notifications.source'])
    .where('notification_runs.status', 'in', ['pending', 'sending'])
    .where('notification_runs.segment_id', '=', segmentId)
    .where('notification_runs.site_id', '=', siteId)
    .orderBy('notification_runs.due_at')
    .limit(50)
    .execute();
  return rows.map((row) => ({ key: `notification:${row.id}`, kind: kindOfSource(row.source), name: row.title }));
}
