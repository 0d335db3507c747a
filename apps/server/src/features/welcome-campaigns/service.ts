import crypto from 'node:crypto';
import {
  rate,
  type ActionButton,
  type CampaignInput,
  type CampaignPatchInput,
  type CampaignStepInput,
  type SiteRole,
  type UtmParams,
  type WelcomeCampaign,
} from '@herald/contracts';
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context';
import type { Database, WelcomeCampaignRow, WelcomeCampaignStepRow } from '../../db/schema';
import { notFound } from '../../platform/errors';
import { iso } from '../../platform/responses';
import { checkSiteRole } from '../../platform/site-roles';
import { changedFields, recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import * as repo from './repository';
import { createNotification } from '../notifications/create';
import { sentStepContent, utmParamsOf, type AuthoredStepContent } from './step-content';
import { requireSegmentOfSite } from '../segments/service';

const NO_COUNTERS: repo.SendCounters = { targeted: 0, sent: 0, failed: 0, expired: 0, skipped: 0, pending: 0, delivered: 0, clicked: 0 };

function parseActions(json: string | null): ActionButton[] {
  return json ? (JSON.parse(json) as ActionButton[]) : [];
}

interface CampaignView {
  row: WelcomeCampaignRow;
  steps: WelcomeCampaignStepRow[];
  stepCounters: Map<string, repo.SendCounters>;
  totals: repo.SendCounters;
  enrolled: number;
}

export function toCampaignResponse({ row, steps, stepCounters, totals, enrolled }: CampaignView): WelcomeCampaign {
  return {
    id: row.id,
    site_id: row.site_id,
    name: row.name,
    is_active: row.is_active === 1,
    icon_url: row.icon_url,
    utm_params: utmParamsOf(row),
    segment_id: row.segment_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    steps_count: steps.length,
    steps: steps.map((step) => ({
      id: step.id,
      sequence_order: step.sequence_order,
      delay_minutes: step.delay_minutes,
      notification: {
        title: step.title,
        message: step.message,
        destination_url: step.destination_url,
        icon_url: step.icon_url,
        image_url: step.image_url,
        actions: parseActions(step.actions),
      },
      stats: stepCounters.get(step.notification_id) ?? NO_COUNTERS,
    })),
    stats: { ...totals, enrolled, click_rate: rate(totals.clicked, totals.delivered) },
  };
}

/** Loads what the API shows of each campaign: its current steps, their counters, totals over all versions, enrolments. */
async function loadViews(db: AppContext['db'], rows: WelcomeCampaignRow[]): Promise<WelcomeCampaign[]> {
  const ids = rows.map((r) => r.id);
  const [stepsByCampaign, totals, enrolled] = await Promise.all([
    repo.stepsOfVersions(
      db,
      rows.map((r) => ({ campaignId: r.id, version: r.steps_version })),
    ),
    repo.campaignTotals(db, ids),
    repo.enrollmentCounts(db, ids),
  ]);
  const stepCounters = await repo.countersOfNotifications(
    db,
    [...stepsByCampaign.values()].flat().map((s) => s.notification_id),
  );
  return rows.map((row) =>
    toCampaignResponse({ row, steps: stepsByCampaign.get(row.id) ?? [], stepCounters, totals: totals.get(row.id) ?? NO_COUNTERS, enrolled: enrolled.get(row.id) ?? 0 }),
  );
}

function authoredContent(step: CampaignStepInput): AuthoredStepContent {
  return {
    title: step.notification.title,
    message: step.notification.message,
    destination_url: step.notification.destination_url,
    icon_url: step.notification.icon_url ?? null,
    image_url: step.notification.image_url ?? null,
    actions: step.notification.actions ?? [],
  };
}

function authoredContentOfRow(step: WelcomeCampaignStepRow): { sequence_order: number; delay_minutes: number; content: AuthoredStepContent } {
  return {
    sequence_order: step.sequence_order,
    delay_minutes: step.delay_minutes,
    content: {
      title: step.title,
      message: step.message,
      destination_url: step.destination_url,
      icon_url: step.icon_url,
      image_url: step.image_url,
      actions: parseActions(step.actions),
    },
  };
}

/**
 * Writes one version of a campaign's steps: per step, the notification row
 * that is sent (source 'campaign', hidden from the notifications list) and
 * the step row that keeps what the owner wrote.
 */
async function writeStepsVersion(
  trx: Transaction<Database>,
  campaign: WelcomeCampaignRow,
  steps: Array<{ sequence_order: number; delay_minutes: number; content: AuthoredStepContent }>,
  now: number,
): Promise<void> {
  const ordered = [...steps].sort((a, b) => a.sequence_order - b.sequence_order);
  const stepRows = [];
  for (const step of ordered) {
    const notificationId = crypto.randomUUID();
    // Each enrolment's run carries the campaign's segment as it was at enrolment, so the step's own is null.
    await createNotification(
      trx,
      { id: notificationId, siteId: campaign.site_id, type: 'ONE_TIME', source: 'campaign', content: sentStepContent(step.content, campaign), segmentId: null, status: 'scheduled' },
      now,
    );
    stepRows.push({
      id: crypto.randomUUID(),
      campaign_id: campaign.id,
      version: campaign.steps_version,
      sequence_order: step.sequence_order,
      delay_minutes: step.delay_minutes,
      notification_id: notificationId,
      title: step.content.title,
      message: step.content.message,
      destination_url: step.content.destination_url,
      icon_url: step.content.icon_url,
      image_url: step.content.image_url,
      actions: step.content.actions.length ? JSON.stringify(step.content.actions) : null,
      created_at: now,
    });
  }
  await repo.insertSteps(trx, stepRows);
}

/** Everything a version of the steps sends: the steps in order with their delays and content as sent. */
function versionSignature(campaign: WelcomeCampaignRow, steps: Array<{ sequence_order: number; delay_minutes: number; content: AuthoredStepContent }>): string {
  const ordered = [...steps].sort((a, b) => a.sequence_order - b.sequence_order);
  return JSON.stringify(ordered.map((step) => [step.delay_minutes, sentStepContent(step.content, campaign)]));
}

function utmColumns(params: { utm_source: string | null; utm_medium: string | null; utm_campaign: string | null } | null | undefined): Pick<UtmParams, 'utm_source' | 'utm_medium' | 'utm_campaign'> {
  return { utm_source: params?.utm_source ?? null, utm_medium: params?.utm_medium ?? null, utm_campaign: params?.utm_campaign ?? null };
}

export function createWelcomeCampaignsService(ctx: AppContext) {
  const { db, clock, dbKind } = ctx;

  async function ownedCampaign(userId: string, id: string, needed: SiteRole): Promise<WelcomeCampaignRow> {
    return checkSiteRole(await repo.findCampaignOfUser(db, userId, id), needed, 'Campaign');
  }

  /** Spec §4: "only one can be active at a time". The others stop, including their enrolled subscribers' future steps. */
  async function deactivateOthers(trx: Transaction<Database>, siteId: string, keepId: string, now: number): Promise<void> {
    const deactivated = await repo.deactivateOtherCampaigns(trx, siteId, keepId, now);
    await repo.cancelPendingRunsOfCampaigns(trx, deactivated, now);
  }

  async function view(id: string): Promise<WelcomeCampaign> {
    const row = await repo.findCampaign(db, id);
    if (!row) throw notFound('Campaign');
    return (await loadViews(db, [row]))[0]!;
  }

  return {
    async list(userId: string, siteId: string): Promise<WelcomeCampaign[]> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      return loadViews(db, await repo.listCampaignsOfSite(db, siteId));
    },

    async get(userId: string, id: string): Promise<WelcomeCampaign> {
      return (await loadViews(db, [await ownedCampaign(userId, id, 'viewer')]))[0]!;
    },

    async create(userId: string, siteId: string, body: CampaignInput): Promise<WelcomeCampaign> {
      const site = await requireSiteRole(ctx, userId, siteId, 'editor');
      if (body.segment_id) await requireSegmentOfSite(db, site.id, body.segment_id);
      const now = clock.now();
      const campaign: WelcomeCampaignRow = {
        id: crypto.randomUUID(),
        site_id: site.id,
        name: body.name,
        is_active: body.is_active ? 1 : 0,
        icon_url: body.icon_url ?? null,
        ...utmColumns(body.utm_params),
        segment_id: body.segment_id ?? null,
        steps_version: 1,
        created_at: now,
        updated_at: now,
      };
      await db.transaction().execute(async (trx) => {
        if (!(await repo.lockSite(trx, dbKind, site.id, 'change'))) throw notFound('Site');
        if (campaign.is_active) await deactivateOthers(trx, site.id, campaign.id, now);
        await repo.insertCampaign(trx, campaign);
        await writeStepsVersion(
          trx,
          campaign,
          body.steps.map((step) => ({ sequence_order: step.sequence_order, delay_minutes: step.delay_minutes, content: authoredContent(step) })),
          now,
        );
        await recordAudit(ctx, { siteId: site.id, actor: { userId }, action: 'created', subject: { type: 'welcome_campaign', id: campaign.id, label: campaign.name }, detail: { active: body.is_active === true } }, trx);
      });
      return view(campaign.id);
    },

    /**
     * Spec §4: toggling (`{ is_active }`) and editing. Changing the steps, the
     * campaign icon or the UTM parameters writes a new version of the steps:
     * subscribers already enrolled keep theirs ("changes affect only future
     * subscribers"). Deactivating cancels every enrolled subscriber's future steps.
     */
    async update(userId: string, id: string, body: CampaignPatchInput): Promise<WelcomeCampaign> {
      const owned = await ownedCampaign(userId, id, 'editor');
      const site = await requireSiteRole(ctx, userId, owned.site_id, 'editor');
      if (body.segment_id) await requireSegmentOfSite(db, site.id, body.segment_id);
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        if (!(await repo.lockSite(trx, dbKind, owned.site_id, 'change'))) throw notFound('Campaign');
        const current = await repo.findCampaign(trx, id);
        if (!current) throw notFound('Campaign');

        const next: WelcomeCampaignRow = {
          ...current,
          name: body.name ?? current.name,
          icon_url: body.icon_url !== undefined ? body.icon_url : current.icon_url,
          ...(body.utm_params !== undefined ? utmColumns(body.utm_params) : {}),
          segment_id: body.segment_id !== undefined ? body.segment_id : current.segment_id,
          updated_at: now,
        };

        if (body.steps !== undefined || body.icon_url !== undefined || body.utm_params !== undefined) {
          const currentSteps = ((await repo.stepsOfVersions(trx, [{ campaignId: id, version: current.steps_version }])).get(id) ?? []).map(authoredContentOfRow);
          const steps =
            body.steps?.map((step) => ({ sequence_order: step.sequence_order, delay_minutes: step.delay_minutes, content: authoredContent(step) })) ?? currentSteps;
          // The edit form sends everything; a save that changes nothing that is sent keeps the current version.
          if (versionSignature(next, steps) !== versionSignature(current, currentSteps)) {
            next.steps_version = current.steps_version + 1;
            await writeStepsVersion(trx, next, steps, now);
          }
        }

        if (body.is_active === true && !current.is_active) {
          await deactivateOthers(trx, current.site_id, id, now);
          next.is_active = 1;
        } else if (body.is_active === false && current.is_active) {
          next.is_active = 0;
          await repo.cancelPendingRunsOfCampaigns(trx, [id], now);
        }
        await repo.saveCampaign(trx, next);
        const subject = { type: 'welcome_campaign' as const, id, label: next.name };
        const audit = { siteId: current.site_id, actor: { userId }, subject };
        const { is_active: _isActive, steps_version: stepsVersion, ...fields } = next;
        const changed = changedFields(current, fields);
        if (stepsVersion !== current.steps_version && body.steps !== undefined) changed.push('steps');
        if (changed.length > 0) await recordAudit(ctx, { ...audit, action: 'updated', changedFields: changed }, trx);
        if (next.is_active !== current.is_active) await recordAudit(ctx, { ...audit, action: 'toggled', detail: { active: next.is_active === 1 } }, trx);
      });
      return view(id);
    },

    /** Deleting a campaign stops it for everyone: pending steps go with its notifications. */
    async remove(userId: string, id: string): Promise<void> {
      const owned = await ownedCampaign(userId, id, 'editor');
      await db.transaction().execute(async (trx) => {
        if (!(await repo.lockSite(trx, dbKind, owned.site_id, 'change'))) return;
        await repo.deleteStepNotificationsOfCampaign(trx, id);
        await repo.deleteCampaign(trx, id);
        await recordAudit(ctx, { siteId: owned.site_id, actor: { userId }, action: 'deleted', subject: { type: 'welcome_campaign', id, label: owned.name } }, trx);
      });
    },
  };
}

