import crypto from 'node:crypto';
import {
  SCHEDULE_MAX_DAYS_AHEAD,
  parseDateTimeInZone,
  type DeliveryMode,
  type Notification,
  type NotificationDelivery,
  type NotificationInput,
  type NotificationPatchInput,
  type NotificationStatus,
  type NotificationType,
} from '@herald/contracts';
import type { Updateable } from 'kysely';
import type { AppContext } from '../../context';
import type { NotificationRow, NotificationsTable, SiteRow } from '../../db/schema';
import { variantsOf } from '../../delivery/ab-split';
import { notificationContent } from '../../delivery/notification-content';
import { createPayloadTemplate, PushPayloadError } from '../../delivery/payload';
import { badRequest, conflict } from '../../platform/errors';
import { iso } from '../../platform/responses';
import { changedFields, recordAudit } from '../audit-log/record';
import { requireSegmentOfSite } from '../segments/service';
import { requireSiteRole } from '../sites/service';
import { checkAbFields, contentOfVariantA, syncVariantA, variantRows, writeAbTest } from './ab-test';
import { deleteAbTest, findAbTest } from './ab-test-repository';
import { audited, changeableNotification, ownedNotification } from './access';
import { createNotificationActions } from './actions';
import * as automation from './automation-repository';
import { createNotification } from './create';
import { createOneTimeRun, oneTimeRunKey } from './one-time-run';
import { createNotificationReports } from './report-service';
import * as repo from './repository';
import { loadNotificationResponse, toNotificationResponses } from './responses';
import { PAST_TOLERANCE_MS, newScheduleRow, readSchedule, writeRecurringSchedule } from './schedule-writer';

const DAY_MS = 86_400_000;

/** The fields that belong to one type only must not arrive with another (a clear 400 rather than a silently ignored field). */
function checkTypeFields(type: NotificationType, body: Pick<NotificationPatchInput, 'scheduled_at' | 'recurring_schedule' | 'trigger' | 'throttle_per_minute'>): void {
  if (type !== 'ONE_TIME' && body.scheduled_at) {
    throw badRequest(
      type === 'RECURRING'
        ? 'scheduled_at is for one-time notifications: a recurring notification starts at recurring_schedule.start_date'
        : 'scheduled_at is for one-time notifications: a triggered notification is sent when its event arrives',
    );
  }
  if (type !== 'RECURRING' && body.recurring_schedule) throw badRequest('recurring_schedule is only for RECURRING notifications');
  if (type !== 'TRIGGERED' && body.trigger) throw badRequest('trigger is only for TRIGGERED notifications');
  // Each firing of a trigger is a run of one subscriber: there is nothing to spread (docs/delivery.md, "Throttled sends").
  if (type === 'TRIGGERED' && body.throttle_per_minute != null) throw badRequest('throttle_per_minute is for one-time and recurring sends: a triggered notification goes to one subscriber at a time');
}

function contentChanged(existing: NotificationRow, changes: Updateable<NotificationsTable>): boolean {
  const fields = ['title', 'message', 'destination_url', 'icon_url', 'image_url', 'actions', 'segment_id', 'ttl_seconds', 'urgency', 'topic', 'require_interaction', 'throttle_per_minute'] as const;
  return fields.some((field) => changes[field] !== undefined && changes[field] !== existing[field]);
}

/** The longest token a delivery can carry (a 16-digit id and its signature): the worst case for the size check. */
const LONGEST_DELIVERY_TOKEN = `${'9'.repeat(16)}.${'A'.repeat(22)}`;

/**
 * RFC 8291: one push message holds at most 3,993 bytes of payload. Checked when
 * the notification is saved, so an owner learns it then, not from a send where
 * every delivery fails.
 */
function checkPayloadFits(notification: NotificationRow, site: SiteRow, publicUrl: string): void {
  try {
    createPayloadTemplate(notificationContent(notification, site), publicUrl).render(LONGEST_DELIVERY_TOKEN);
  } catch (error) {
    if (error instanceof PushPayloadError) throw badRequest(error.message, 'payload_too_large');
    throw error;
  }
}

/**
 * The notifications API (spec §7): list, read, create, edit and delete here;
 * send, cancel, duplicate and retry in actions.ts; the report and performance
 * in report-service.ts.
 */
/** The stored delivery mode of a request's `delivery` (contracts local-time.ts); a triggered send goes when its event fires. */
function deliveryModeColumns(type: NotificationType, delivery: NotificationDelivery): { delivery_mode: DeliveryMode; local_time: string | null } {
  if (type === 'TRIGGERED' && delivery.mode !== 'at_once') throw badRequest('delivery.mode subscriber_local_time is for one-time and recurring notifications, not triggered ones');
  return { delivery_mode: delivery.mode, local_time: delivery.mode === 'subscriber_local_time' ? (delivery.local_time ?? null) : null };
}

export function createNotificationsService(ctx: AppContext) {
  const { db, clock } = ctx;

  /** Spec help text: scheduling up to 30 days ahead; a schedule time in the past is refused. */
  function parseScheduledAt(value: string, site: SiteRow): number {
    const at = parseDateTimeInZone(value, site.timezone);
    if (at === undefined) throw badRequest('scheduled_at: must be a date and time such as 2026-12-01T09:00');
    const now = clock.now();
    if (at < now - PAST_TOLERANCE_MS) throw badRequest('Schedule time must be in the future');
    if (at > now + SCHEDULE_MAX_DAYS_AHEAD * DAY_MS) throw badRequest(`Notifications can be scheduled up to ${SCHEDULE_MAX_DAYS_AHEAD} days ahead`);
    return at;
  }

  /** A notification may target only a segment of its own site (400 "Segment not found" otherwise). */
  async function checkSegment(site: SiteRow, segmentId: string | null | undefined): Promise<void> {
    if (!segmentId) return;
    await requireSegmentOfSite(db, site.id, segmentId);
  }

  return {
    async list(userId: string, siteId: string, filter: { status?: NotificationStatus[]; type?: NotificationType; page: number; limit: number }) {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      const page = { offset: (filter.page - 1) * filter.limit, limit: filter.limit };
      const [rows, counts] = await Promise.all([repo.listNotifications(db, siteId, filter, page), repo.countNotificationsByStatus(db, siteId)]);
      return { notifications: await toNotificationResponses(db, rows), counts };
    },

    async get(userId: string, id: string): Promise<Notification> {
      const [response] = await toNotificationResponses(db, [await ownedNotification(db, userId, id, 'viewer')]);
      return response!;
    },

    /**
     * ONE_TIME: a draft, or scheduled with scheduled_at. RECURRING: scheduled
     * with its schedule (paused when recurring_schedule.is_active is false).
     * TRIGGERED: scheduled = armed, listening for trigger.event.
     */
    async create(userId: string, siteId: string, body: NotificationInput): Promise<Notification> {
      const site = await requireSiteRole(ctx, userId, siteId, 'editor');
      const type = body.type ?? 'ONE_TIME';
      checkTypeFields(type, body);
      checkAbFields(type, body, false, body.delivery?.mode === 'subscriber_local_time');
      if (type === 'RECURRING' && !body.recurring_schedule) throw badRequest('Start date is required: a recurring notification needs recurring_schedule');
      if (type === 'TRIGGERED' && !body.trigger) throw badRequest('Event name is required: a triggered notification needs trigger');
      await checkSegment(site, body.segment_id);
      const now = clock.now();
      const scheduledAt = type === 'ONE_TIME' && body.scheduled_at ? parseScheduledAt(body.scheduled_at, site) : null;
      // The id is known before the row is stored: the schedule row names it.
      const id = crypto.randomUUID();
      const schedule = body.recurring_schedule
        ? newScheduleRow({ id, site_id: site.id }, readSchedule(body.recurring_schedule, undefined, site), body.recurring_schedule.is_active ?? true, now - PAST_TOLERANCE_MS, null, now)
        : undefined;
      await db.transaction().execute(async (trx) => {
        const row = await createNotification(
          trx,
          {
            id,
            siteId: site.id,
            type,
            source: 'dashboard',
            content: {
              title: body.title,
              message: body.message,
              destination_url: body.destination_url,
              icon_url: body.icon_url ?? null,
              image_url: body.image_url ?? null,
              actions: body.actions ?? [],
              ...(body.variants ? contentOfVariantA(body.variants) : {}),
            },
            segmentId: body.segment_id ?? null,
            delivery: {
              ...(body.ttl_seconds !== undefined ? { ttl_seconds: body.ttl_seconds } : {}),
              ...(body.urgency !== undefined ? { urgency: body.urgency } : {}),
              ...(body.topic !== undefined ? { topic: body.topic } : {}),
              ...(body.require_interaction !== undefined ? { require_interaction: body.require_interaction } : {}),
              ...(body.frequency_cap_exempt !== undefined ? { frequency_cap_exempt: body.frequency_cap_exempt } : {}),
              ...(body.throttle_per_minute !== undefined ? { throttle_per_minute: body.throttle_per_minute } : {}),
              ...(body.delivery !== undefined ? deliveryModeColumns(type, body.delivery) : {}),
              ...(body.quiet_hours_exempt !== undefined ? { quiet_hours_exempt: body.quiet_hours_exempt } : {}),
            },
            status: type !== 'ONE_TIME' || scheduledAt !== null ? 'scheduled' : 'draft',
            scheduledAt,
          },
          now,
          { check: (candidate) => checkPayloadFits(candidate, site, ctx.config.publicUrl) },
        );
        if (body.variants) {
          for (const variant of variantRows(row, body.variants)) checkPayloadFits(variant, site, ctx.config.publicUrl);
          await writeAbTest(trx, row, body, now);
        }
        if (scheduledAt !== null) await createOneTimeRun(trx, row, scheduledAt, now);
        if (schedule) await automation.insertSchedule(trx, schedule);
        if (body.trigger) {
          await automation.upsertTrigger(trx, { notification_id: row.id, site_id: site.id, event_name: body.trigger.event, delay_minutes: body.trigger.delay_minutes, created_at: now, updated_at: now });
        }
        await recordAudit(ctx, audited(userId, row, 'created', { detail: { type } }), trx);
        if (row.status === 'scheduled') await recordAudit(ctx, audited(userId, row, 'scheduled', { detail: { type, ...(scheduledAt !== null ? { at: iso(scheduledAt) } : {}) } }), trx);
      });
      if ((scheduledAt !== null && scheduledAt <= now) || (schedule && schedule.is_active && schedule.next_run_at! <= now)) ctx.wakeScheduler();
      return loadNotificationResponse(db, id);
    },

    /**
     * Spec §4: only draft and scheduled notifications can be edited. A recurring
     * or triggered notification's changes apply from its next send: content is
     * read when a run is sent, and a new schedule starts from now on.
     */
    async update(userId: string, id: string, body: NotificationPatchInput): Promise<Notification> {
      const existing = await changeableNotification(db, userId, id);
      if (existing.status !== 'draft' && existing.status !== 'scheduled') {
        throw conflict(`A ${existing.status} notification cannot be edited`);
      }
      const site = await requireSiteRole(ctx, userId, existing.site_id, 'editor');
      const type = body.type ?? existing.type;
      if (type !== existing.type && existing.status !== 'draft') throw conflict('Only a draft can change its type');
      checkTypeFields(type, { ...body, throttle_per_minute: body.throttle_per_minute !== undefined ? body.throttle_per_minute : existing.throttle_per_minute });
      const abTest = await findAbTest(db, id);
      checkAbFields(type, body, abTest !== undefined, (body.delivery?.mode ?? existing.delivery_mode) === 'subscriber_local_time');
      if (type === 'RECURRING' && body.recurring_schedule === null) throw badRequest('A recurring notification needs its recurring_schedule');
      if (type === 'TRIGGERED' && body.trigger === null) throw badRequest('A triggered notification needs its trigger');
      if (body.segment_id !== undefined) await checkSegment(site, body.segment_id);
      const now = clock.now();
      const changes: Updateable<NotificationsTable> = { updated_at: now };
      if (body.type !== undefined) changes.type = body.type;
      if (body.title !== undefined) changes.title = body.title;
      if (body.message !== undefined) changes.message = body.message;
      if (body.destination_url !== undefined) changes.destination_url = body.destination_url;
      if (body.icon_url !== undefined) changes.icon_url = body.icon_url;
      if (body.image_url !== undefined) changes.image_url = body.image_url;
      if (body.segment_id !== undefined) changes.segment_id = body.segment_id;
      if (body.actions !== undefined) changes.actions = body.actions.length ? JSON.stringify(body.actions) : null;
      if (body.ttl_seconds !== undefined) changes.ttl_seconds = body.ttl_seconds;
      if (body.urgency !== undefined) changes.urgency = body.urgency;
      if (body.topic !== undefined) changes.topic = body.topic;
      if (body.require_interaction !== undefined) changes.require_interaction = body.require_interaction ? 1 : 0;
      if (body.frequency_cap_exempt !== undefined) changes.frequency_cap_exempt = body.frequency_cap_exempt ? 1 : 0;
      if (body.throttle_per_minute !== undefined) changes.throttle_per_minute = body.throttle_per_minute;
      if (body.delivery !== undefined) Object.assign(changes, deliveryModeColumns(type, body.delivery));
      // A draft turned into a triggered notification cannot keep a local time.
      else if (type === 'TRIGGERED' && existing.delivery_mode !== 'at_once') Object.assign(changes, deliveryModeColumns(type, { mode: 'at_once' }));
      if (body.quiet_hours_exempt !== undefined) changes.quiet_hours_exempt = body.quiet_hours_exempt ? 1 : 0;
      if (body.variants) Object.assign(changes, contentOfVariantA(body.variants));

      // One occurrence goes out with one content: a recurring send in progress is not changed half-way.
      if (type === 'RECURRING' && existing.status === 'scheduled' && contentChanged(existing, changes) && (await repo.hasRunInProgress(db, id))) {
        throw conflict('An occurrence of this notification is being sent right now; edit it again once it has finished');
      }

      let scheduledAt: number | null | undefined;
      if (type === 'ONE_TIME' && body.scheduled_at !== undefined) {
        scheduledAt = body.scheduled_at ? parseScheduledAt(body.scheduled_at, site) : null;
        changes.scheduled_at = scheduledAt;
        changes.status = scheduledAt !== null ? 'scheduled' : 'draft';
      }
      if (type !== 'ONE_TIME') changes.scheduled_at = null;

      const nextScheduledAt = scheduledAt !== undefined ? scheduledAt : existing.scheduled_at;
      const nextSegmentId = body.segment_id !== undefined ? body.segment_id : existing.segment_id;
      await db.transaction().execute(async (trx) => {
        // A draft changing type leaves its old type's settings behind.
        if (existing.type === 'RECURRING' && type !== 'RECURRING') await automation.deleteScheduleOfNotification(trx, id);
        if (existing.type === 'TRIGGERED' && type !== 'TRIGGERED') await automation.deleteTriggerOfNotification(trx, id);

        if (type === 'ONE_TIME') {
          const key = oneTimeRunKey(id);
          if (existing.status === 'scheduled') {
            // The run must still be waiting; once the scheduler took it, it is being sent.
            const stillPending =
              nextScheduledAt === null
                ? await repo.deletePendingRun(trx, key)
                : await repo.updatePendingRun(trx, key, { due_at: nextScheduledAt, segment_id: nextSegmentId });
            if (!stillPending) throw conflict('This notification is already being sent');
          } else if (nextScheduledAt !== null) {
            await createOneTimeRun(trx, { ...existing, segment_id: nextSegmentId }, nextScheduledAt, now);
          }
        } else if (type === 'RECURRING') {
          const becomesScheduled = existing.status === 'draft' && body.recurring_schedule !== undefined;
          if (body.recurring_schedule) {
            await writeRecurringSchedule(trx, existing, site, body.recurring_schedule, becomesScheduled, now);
          } else if (!(await automation.findScheduleOfNotification(trx, id))) {
            throw badRequest('Start date is required: a recurring notification needs recurring_schedule');
          }
          if (becomesScheduled) changes.status = 'scheduled';
        } else {
          if (body.trigger) {
            await automation.upsertTrigger(trx, { notification_id: id, site_id: existing.site_id, event_name: body.trigger.event, delay_minutes: body.trigger.delay_minutes, created_at: now, updated_at: now });
            changes.status = 'scheduled';
          } else if (!(await automation.findTriggerOfNotification(trx, id))) {
            throw badRequest('Event name is required: a triggered notification needs trigger');
          }
        }
        checkPayloadFits({ ...existing, ...changes } as NotificationRow, site, ctx.config.publicUrl);
        // A/B variants (docs/product.md, "A/B tests"): replaced, removed, or variant A kept in step with the content; gone with a change of type.
        if (type !== 'ONE_TIME') await deleteAbTest(trx, id);
        else if (body.variants !== undefined || body.ab_test !== undefined) {
          if (body.variants) for (const variant of variantRows({ ...existing, ...changes } as NotificationRow, body.variants)) checkPayloadFits(variant, site, ctx.config.publicUrl);
          await writeAbTest(trx, existing, body, now);
        } else if (abTest) {
          // The shared fields (icon, actions, topic…) changed under the stored variants: each must still fit in one push,
          // as on create, or the send would fail for everyone (variant A is the row itself, checked above).
          for (const variant of variantsOf(abTest).slice(1)) checkPayloadFits({ ...existing, ...changes, ...variant } as NotificationRow, site, ctx.config.publicUrl);
          await syncVariantA(trx, id, changes, now);
        }
        await repo.updateNotification(trx, id, changes);
        const { status: _status, ...fieldChanges } = changes;
        const fields = changedFields(existing, fieldChanges);
        for (const field of ['recurring_schedule', 'trigger'] as const) if (body[field]) fields.push(field);
        await recordAudit(ctx, audited(userId, { ...existing, title: changes.title ?? existing.title }, 'updated', { changedFields: fields }), trx);
        if (changes.status === 'scheduled' && (existing.status !== 'scheduled' || changes.scheduled_at !== undefined)) {
          await recordAudit(ctx, audited(userId, existing, 'scheduled', { detail: { type, ...(changes.scheduled_at ? { at: iso(changes.scheduled_at) } : {}) } }), trx);
        }
      });
      if (scheduledAt !== undefined && scheduledAt !== null && scheduledAt <= now) ctx.wakeScheduler();
      if (type === 'RECURRING') ctx.wakeScheduler();
      return loadNotificationResponse(db, id);
    },

    /** Spec §4: only draft and scheduled notifications can be deleted. */
    async remove(userId: string, id: string): Promise<void> {
      const existing = await changeableNotification(db, userId, id);
      if (existing.status !== 'draft' && existing.status !== 'scheduled') {
        throw conflict(`A ${existing.status} notification cannot be deleted`);
      }
      await db.transaction().execute(async (trx) => {
        if (existing.status === 'scheduled' && existing.type === 'ONE_TIME') {
          const run = await repo.findRunByKey(trx, oneTimeRunKey(id));
          if (run && run.status !== 'pending') throw conflict('This notification is already being sent');
        }
        // Deleting cascades to the runs: one being sent would be cut off half-way, its figures gone with it.
        if (existing.status === 'scheduled' && existing.type === 'RECURRING' && (await repo.hasRunInProgress(trx, id))) {
          throw conflict('An occurrence of this notification is being sent right now; delete it once it has finished');
        }
        if (existing.status === 'scheduled' && existing.type === 'TRIGGERED' && (await repo.hasRunInProgress(trx, id))) {
          throw conflict('This notification is being sent to a subscriber right now; cancel it to stop new sends, and delete it once that one has finished');
        }
        await repo.deleteNotification(trx, id);
        await recordAudit(ctx, audited(userId, existing, 'deleted'), trx);
      });
    },

    ...createNotificationActions(ctx),
    ...createNotificationReports(ctx),
  };
}
