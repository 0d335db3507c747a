// SQL of welcome campaigns: campaigns, their versioned steps, enrolments,
// and the drip runs (notification_runs with `drip:` dedupe keys) they create.
import { pendingOf, type OutcomeCounts } from '@herald/contracts';
import type { SegmentUse } from '../segments/segment-uses';
import { expressionBuilder, sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { SiteCondition } from '../subscribers/hooks';
import type { DatabaseKind } from '../../db/database';
import { membershipsOf } from '../../db/membership';
import type {
  Database,
  WelcomeCampaignRow,
  WelcomeCampaignStepRow,
  WelcomeCampaignStepsTable,
  WelcomeCampaignsTable,
} from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The dedupe key of one drip step for one enrolment: creating it twice is
 * impossible. `drip:<enrollmentId>:<NN>:<stepId>`, NN the step's two-digit
 * sequence number, so an enrolment's keys sort in step order (migration 0019
 * relies on it). Enrolment ids are UUIDs: the prefix up to NN has a
 * fixed length.
 */
export const dripRunKey = (enrollmentId: string, sequenceOrder: number, stepId: string) => `drip:${enrollmentId}:${String(sequenceOrder).padStart(2, '0')}:${stepId}`;
const DRIP_KEY_PATTERN = 'drip:%';

/**
 * Serialises campaign changes of one site on PostgreSQL (SQLite runs one
 * write transaction at a time already). A change takes the site row FOR
 * UPDATE; an enrolment takes FOR KEY SHARE, which waits for a change in
 * progress and then reads its result — so a new subscriber is never enrolled
 * in a campaign that was just deactivated, nor missed by one just activated.
 * KEY SHARE does not conflict with the subscriber counter updates on the same row.
 */
export async function lockSite(trx: Transaction<Database>, kind: DatabaseKind, siteId: string, mode: 'change' | 'enrol'): Promise<boolean> {
  if (kind !== 'postgres') {
    return (await trx.selectFrom('sites').select('id').where('id', '=', siteId).executeTakeFirst()) !== undefined;
  }
  const query = trx.selectFrom('sites').select('id').where('id', '=', siteId);
  const row = await (mode === 'change' ? query.forUpdate() : query.forKeyShare()).executeTakeFirst();
  return row !== undefined;
}

/** A campaign if it belongs to one of the user's sites (else undefined: the caller answers 404). */
export function findCampaignOfUser(db: Db, userId: string, campaignId: string): Promise<(WelcomeCampaignRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('welcome_campaigns')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'welcome_campaigns.site_id')
    .selectAll('welcome_campaigns')
    .select('membership.role as member_role')
    .where('welcome_campaigns.id', '=', campaignId)
    .executeTakeFirst();
}

export function findCampaign(db: Db, campaignId: string): Promise<WelcomeCampaignRow | undefined> {
  return db.selectFrom('welcome_campaigns').selectAll().where('id', '=', campaignId).executeTakeFirst();
}

export function listCampaignsOfSite(db: Db, siteId: string): Promise<WelcomeCampaignRow[]> {
  return db.selectFrom('welcome_campaigns').selectAll().where('site_id', '=', siteId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(500).execute();
}

/** The site of `siteId` has an active welcome campaign (a subscriber-created hook's `concerns`). */
export const hasActiveCampaign: SiteCondition = (siteId) => {
  const eb = expressionBuilder<Database, never>();
  return eb.exists(eb.selectFrom('welcome_campaigns').select('id').where('site_id', '=', siteId).where('is_active', '=', 1));
};

export function findActiveCampaignOfSite(db: Db, siteId: string): Promise<WelcomeCampaignRow | undefined> {
  return db.selectFrom('welcome_campaigns').selectAll().where('site_id', '=', siteId).where('is_active', '=', 1).executeTakeFirst();
}

export async function insertCampaign(db: Db, row: Insertable<WelcomeCampaignsTable>): Promise<void> {
  await db.insertInto('welcome_campaigns').values(row).execute();
}

/** Writes a campaign's changeable columns (its id, site and creation time never change). */
export async function saveCampaign(db: Db, row: WelcomeCampaignRow): Promise<void> {
  await db
    .updateTable('welcome_campaigns')
    .set({
      name: row.name,
      is_active: row.is_active,
      icon_url: row.icon_url,
      utm_source: row.utm_source,
      utm_medium: row.utm_medium,
      utm_campaign: row.utm_campaign,
      segment_id: row.segment_id,
      steps_version: row.steps_version,
      updated_at: row.updated_at,
    })
    .where('id', '=', row.id)
    .execute();
}

/** Deactivates the site's other active campaigns; returns their ids. */
export async function deactivateOtherCampaigns(db: Db, siteId: string, keepId: string, now: number): Promise<string[]> {
  const rows = await db
    .updateTable('welcome_campaigns')
    .set({ is_active: 0, updated_at: now })
    .where('site_id', '=', siteId)
    .where('id', '!=', keepId)
    .where('is_active', '=', 1)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

export async function insertSteps(db: Db, rows: Insertable<WelcomeCampaignStepsTable>[]): Promise<void> {
  if (rows.length) await db.insertInto('welcome_campaign_steps').values(rows).execute();
}

/** The steps of one version of each campaign, in sequence order. */
export async function stepsOfVersions(db: Db, versions: Array<{ campaignId: string; version: number }>): Promise<Map<string, WelcomeCampaignStepRow[]>> {
  const byCampaign = new Map<string, WelcomeCampaignStepRow[]>();
  if (!versions.length) return byCampaign;
  const rows = await db
    .selectFrom('welcome_campaign_steps')
    .selectAll()
    .where((eb) => eb.or(versions.map((v) => eb.and([eb('campaign_id', '=', v.campaignId), eb('version', '=', v.version)]))))
    .orderBy('campaign_id')
    .orderBy('sequence_order')
    .execute();
  for (const row of rows) byCampaign.set(row.campaign_id, [...(byCampaign.get(row.campaign_id) ?? []), row]);
  return byCampaign;
}

export type SendCounters = OutcomeCounts;

const COUNTER_COLUMNS = ['total_count', 'sent_count', 'failed_count', 'expired_count', 'skipped_count', 'delivered_count', 'clicked_count'] as const;

function countersOf(row: Record<(typeof COUNTER_COLUMNS)[number], number | string | null>): SendCounters {
  const counts = {
    targeted: Number(row.total_count ?? 0),
    sent: Number(row.sent_count ?? 0),
    failed: Number(row.failed_count ?? 0),
    expired: Number(row.expired_count ?? 0),
    skipped: Number(row.skipped_count ?? 0),
    delivered: Number(row.delivered_count ?? 0),
    clicked: Number(row.clicked_count ?? 0),
  };
  return { ...counts, pending: pendingOf(counts) };
}

/** Counters of the given step notifications, by notification id. */
export async function countersOfNotifications(db: Db, notificationIds: string[]): Promise<Map<string, SendCounters>> {
  if (!notificationIds.length) return new Map();
  const rows = await db
    .selectFrom('notifications')
    .select(['id', ...COUNTER_COLUMNS])
    .where('id', 'in', notificationIds)
    .execute();
  return new Map(rows.map((r) => [r.id, countersOf(r)]));
}

/** What each campaign's steps did, across every version of its steps. */
export async function campaignTotals(db: Db, campaignIds: string[]): Promise<Map<string, SendCounters>> {
  if (!campaignIds.length) return new Map();
  const rows = await db
    .selectFrom('welcome_campaign_steps')
    .innerJoin('notifications', 'notifications.id', 'welcome_campaign_steps.notification_id')
    .select((eb) => ['welcome_campaign_steps.campaign_id as campaign_id', ...COUNTER_COLUMNS.map((column) => eb.fn.sum<number>(`notifications.${column}`).as(column))])
    .where('welcome_campaign_steps.campaign_id', 'in', campaignIds)
    .groupBy('welcome_campaign_steps.campaign_id')
    .execute();
  return new Map(rows.map((r) => [r.campaign_id, countersOf(r)]));
}

export async function enrollmentCounts(db: Db, campaignIds: string[]): Promise<Map<string, number>> {
  if (!campaignIds.length) return new Map();
  const rows = await db
    .selectFrom('welcome_campaign_enrollments')
    .select(['campaign_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('campaign_id', 'in', campaignIds)
    .groupBy('campaign_id')
    .execute();
  return new Map(rows.map((r) => [r.campaign_id, Number(r.n)]));
}

/** Enrols a subscriber unless already enrolled in this campaign; true when this call did it. */
export async function insertEnrollmentIfNew(
  db: Db,
  row: { id: string; campaign_id: string; site_id: string; subscriber_id: string; steps_version: number; enrolled_at: number },
): Promise<boolean> {
  const result = await db
    .insertInto('welcome_campaign_enrollments')
    .values(row)
    .onConflict((oc) => oc.columns(['campaign_id', 'subscriber_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Cancels the drip runs of campaigns that have not started yet; the number cancelled. */
export async function cancelPendingRunsOfCampaigns(db: Db, campaignIds: string[], now: number): Promise<number> {
  if (!campaignIds.length) return 0;
  const stepNotifications = db.selectFrom('welcome_campaign_steps').select('notification_id').where('campaign_id', 'in', campaignIds);
  const result = await db
    .updateTable('notification_runs')
    .set({ status: 'cancelled', finished_at: now })
    .where('notification_id', 'in', stepNotifications)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Deletes the notifications of every version of a campaign's steps, which
 * takes their steps, runs and deliveries with them (foreign keys cascade):
 * a run being sent right now finds itself gone and stops.
 */
export async function deleteStepNotificationsOfCampaign(db: Db, campaignId: string): Promise<void> {
  const ids = (await db.selectFrom('welcome_campaign_steps').select('notification_id').where('campaign_id', '=', campaignId).execute()).map((r) => r.notification_id);
  for (let i = 0; i < ids.length; i += 500) {
    await db.deleteFrom('notifications').where('id', 'in', ids.slice(i, i + 500)).execute();
  }
}

export async function deleteCampaign(db: Db, campaignId: string): Promise<void> {
  await db.deleteFrom('welcome_campaigns').where('id', '=', campaignId).execute();
}

/**
 * Spec §4 (and the issue): an unsubscribed subscriber gets nothing more. Drip
 * steps of inactive subscribers that are due are cancelled before the
 * scheduler would claim them (fan-out skips inactive subscribers anyway; this
 * makes the run say so). Conditional on `pending`, like the claim, so it
 * never touches a run another scheduler already took.
 */
export async function cancelDueDripRunsOfInactiveSubscribers(db: Db, now: number): Promise<number> {
  const result = await db
    .updateTable('notification_runs')
    .set({ status: 'cancelled', finished_at: now, last_error: 'Subscriber unsubscribed' })
    .where('status', '=', 'pending')
    .where('due_at', '<=', now)
    .where('dedupe_key', 'like', DRIP_KEY_PATTERN)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('subscribers')
          .select(sql<number>`1`.as('one'))
          .whereRef('subscribers.id', '=', 'notification_runs.subscriber_id')
          .where('subscribers.is_active', '=', 0),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Campaigns that target a segment (deleting it is refused while they exist; see segments/segment-uses.ts). */
export async function campaignsUsingSegment(db: Db, siteId: string, segmentId: string): Promise<SegmentUse[]> {
  const rows = await db
    .selectFrom('welcome_campaigns')
    .select(['id', 'name'])
    .where('site_id', '=', siteId)
    .where('segment_id', '=', segmentId)
    .orderBy('created_at')
    .limit(50)
    .execute();
  return rows.map((row) => ({ key: `welcome-campaign:${row.id}`, kind: 'welcome campaign', name: row.name }));
}
