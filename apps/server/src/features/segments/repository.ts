// SQL of the segments feature.
import { SEGMENT_TAGS_MAX, type SegmentRules } from '@herald/contracts';
import { sql, type ExpressionBuilder, type Insertable, type Kysely, type SqlBool, type Transaction, type Updateable } from 'kysely';
import { SAMPLE_PREDICATE } from '../../db/migrations/0030_subscriber_search_and_sample';
import { TAG_SAMPLE_PREDICATE } from '../../db/migrations/0032_subscriber_tags_sample';
import { membershipsOf } from '../../db/membership';
import type { Database, SegmentRow, SegmentsTable } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';
import { readActiveSubscriberCount } from '../analytics/site-counters';
import type { SegmentUse } from './segment-uses';
import { applySegmentRules, hasRules, segmentRulesMatch, subscribedByOf } from './segment-rules';

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
function sampleOfSite(db: Db, siteId: string) {
  return db
    .selectFrom('subscribers')
    .where('subscribers.site_id', '=', siteId)
    .where('subscribers.is_active', '=', 1)
    .where(sql.raw<SqlBool>(SAMPLE_PREDICATE));
}

function sampledActive(db: Db, siteId: string) {
  return sampleOfSite(db, siteId).select((eb) => eb.fn.countAll<number>().as('n'));
}

export async function countSampledActive(db: Db, siteId: string): Promise<number> {
  return Number((await sampledActive(db, siteId).executeTakeFirstOrThrow()).n);
}

/**
 * The sampled subscribers holding a tag, on the tags' own sample index
 * (subscriber_tags_sample, migration 0032): a sampled subscriber's tag rows
 * are in that sample too, both being chosen by the subscriber's id.
 */
function sampledHoldersOf(db: Db, siteId: string, tag: string) {
  return db
    .selectFrom('subscriber_tags')
    .select('subscriber_tags.subscriber_id')
    .where('subscriber_tags.site_id', '=', siteId)
    .where('subscriber_tags.tag', '=', tag)
    .where(sql.raw<SqlBool>(TAG_SAMPLE_PREDICATE));
}

/**
 * The count of the sample's active subscribers matching one segment's rules
 * (exported for the plan test): an index range of the sample where the rules
 * allow (the index is ordered by browser, OS, country), each tag as the list
 * of its sampled holders, read once.
 */
export function sampledMatchingQuery(db: Db, siteId: string, rules: SegmentRules, now: number) {
  return applySegmentRules(sampledActive(db, siteId), rules, now, (tag, eb) => eb('subscribers.id', 'in', sampledHoldersOf(db, siteId, tag)));
}

export async function countSampledMatching(db: Db, siteId: string, rules: SegmentRules, now: number): Promise<number> {
  return Number((await sampledMatchingQuery(db, siteId, rules, now).executeTakeFirstOrThrow()).n);
}

/**
 * For each of several segments' rules, the count of the sample's active
 * subscribers matching them, in one read of the sample (one per
 * TAGS_PER_READ tags the rules name between them): the segments list shows
 * up to SEGMENTS_PER_SITE_MAX counts, and a read each would cost that many
 * reads. The condition is segmentRulesMatch, as for one segment.
 */
export async function countSampledMatchingEach(db: Db, siteId: string, rulesList: readonly SegmentRules[], now: number): Promise<number[]> {
  const counts: number[] = [];
  for (const part of partsByTags(rulesList)) {
    const row = (await sampledMatchingEachQuery(db, siteId, part, now).executeTakeFirstOrThrow()) as Record<string, number | string | null>;
    // A sum over no groups is null: no sampled subscriber matched.
    counts.push(...part.map((_, i) => Number(row[`matching_${i}`] ?? 0)));
  }
  return counts;
}

/**
 * Most tags one read of the sample joins: SQLite joins at most 64 tables,
 * and each tag doubles the kinds of subscriber the read may group. At least
 * SEGMENT_TAGS_MAX, so every segment fits in one read.
 */
const TAGS_PER_READ = Math.max(24, SEGMENT_TAGS_MAX);

/** The rules in order, cut into runs that name at most TAGS_PER_READ tags between them (usually one run). */
function partsByTags(rulesList: readonly SegmentRules[]): SegmentRules[][] {
  const parts: SegmentRules[][] = [];
  let part: SegmentRules[] = [];
  let tags = new Set<string>();
  for (const rules of rulesList) {
    const added = (rules.tags ?? []).filter((tag) => !tags.has(tag));
    if (part.length && tags.size + added.length > TAGS_PER_READ) {
      parts.push(part);
      part = [];
      tags = new Set();
    }
    part.push(rules);
    for (const tag of rules.tags ?? []) tags.add(tag);
  }
  if (part.length) parts.push(part);
  return parts;
}

/**
 * countSampledMatchingEach's query (exported for the plan test), in two steps
 * so that its cost hardly grows with the number of segments:
 * - The sample is read once and grouped into the kinds of subscriber the
 *   rules can tell apart: browser, OS, country, which side of each rule's
 *   subscription cut-off, and which of the named tags they hold. A
 *   subscription time becomes the earliest cut-off at or after it (or one
 *   past the last), which every `subscribed_at <= cut-off` condition answers
 *   as the time itself would. Each tag is joined once, as its sampled
 *   holders, on the subscriber's id (which the sample's index holds since
 *   migration 0038); a subscriber has at most one row per tag (the table's
 *   key), so a join adds no rows.
 * - Each segment's condition, segmentRulesMatch as for a send, then adds
 *   up the groups it matches (`sum(n) filter (where …)`): a few thousand
 *   groups at most, instead of every sampled subscriber per segment.
 */
export function sampledMatchingEachQuery(db: Db, siteId: string, rulesList: readonly SegmentRules[], now: number) {
  const tags = [...new Set(rulesList.flatMap((rules) => rules.tags ?? []))];
  const holders = new Map(tags.map((tag, i) => [tag, i]));
  const cutOffs = [...new Set(rulesList.flatMap((rules) => subscribedByOf(rules, now) ?? []))].sort((a, b) => a - b);
  let sample = sampleOfSite(db, siteId);
  for (const [tag, i] of holders) {
    // The alias is made here, not typed: the builder keeps the subscribers-only shape.
    sample = sample.leftJoin(sampledHoldersOf(db, siteId, tag).as(`tag_${i}`), (join) => join.on(sql<SqlBool>`${sql.ref(`tag_${i}.subscriber_id`)} = ${sql.ref('subscribers.id')}`)) as unknown as typeof sample;
  }
  // Whole numbers of milliseconds, written as literals: a bound parameter in THEN would have no type on PostgreSQL.
  const subscribedAt = cutOffs.length
    ? sql<number>`case ${sql.join(
        cutOffs.map((cutOff) => sql`when ${sql.ref('subscribers.subscribed_at')} <= ${sql.lit(cutOff)} then ${sql.lit(cutOff)}`),
        sql` `,
      )} else ${sql.lit(cutOffs[cutOffs.length - 1]! + 1)} end`
    : sql<number>`0`;
  const kinds = sample
    .select((eb) => [
      'subscribers.browser',
      'subscribers.os',
      'subscribers.country',
      subscribedAt.as('subscribed_at'),
      ...tags.map((_, i) => sql<number>`case when ${sql.ref(`tag_${i}.subscriber_id`)} is null then 0 else 1 end`.as(`has_tag_${i}`)),
      eb.fn.countAll<number>().as('n'),
    ])
    // By position: the same expressions as selected, on both databases.
    .groupBy(Array.from({ length: 4 + tags.length }, (_, i) => sql.lit(i + 1)));
  // Named `subscribers`, with its columns' names, so the conditions read it as they read the table.
  return db.selectFrom(kinds.as('subscribers')).select((eb) =>
    rulesList.map((rules, i) =>
      eb.fn
        .sum<number | string | null>('subscribers.n')
        .filterWhere(segmentRulesMatch(eb as unknown as ExpressionBuilder<Database, 'subscribers'>, rules, now, (tag) => sql<SqlBool>`${sql.ref(`subscribers.has_tag_${holders.get(tag)!}`)} = 1`))
        .as(`matching_${i}`),
    ),
  );
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
 * a welcome campaign's steps send to every future subscriber; an A/B test
 * whose sample went out ("completed") still sends its winner to the rest.
 */
export async function notificationsUsingSegment(db: Db, siteId: string, segmentId: string): Promise<SegmentUse[]> {
  const rows = await db
    .selectFrom('notifications')
    .select(['id', 'title', 'source'])
    .where('site_id', '=', siteId)
    .where('segment_id', '=', segmentId)
    .where((eb) =>
      eb.or([
        eb.not(eb.and([eb('type', '=', 'ONE_TIME'), eb('source', '!=', 'campaign'), eb('status', 'in', ['completed', 'completed_with_errors', 'cancelled', 'failed'])])),
        eb.exists(eb.selectFrom('ab_tests').select('ab_tests.notification_id').whereRef('ab_tests.notification_id', '=', 'notifications.id').where('ab_tests.status', '=', 'testing')),
      ]),
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
