import crypto from 'node:crypto';
import {
  SCHEDULE_MAX_DAYS_AHEAD,
  rate,
  type ActionButton,
  type Notification,
  type NotificationInput,
  type NotificationPatchInput,
  type NotificationPerformance,
  type NotificationStatus,
  type NotificationType,
} from '@herald/contracts';
import type { Updateable } from 'kysely';
import type { AppContext } from '../../context';
import type { NotificationRow, NotificationsTable, RunRow, SiteRow } from '../../db/schema';
import { insertRun } from '../../delivery/runs';
import { badRequest, conflict, notFound } from '../../platform/errors';
import { iso, isoOrNull } from '../../platform/responses';
import { parseDateTimeInZone } from '../../platform/time';
import { requireSegmentOfSite } from '../segments/service';
import { requireOwnedSite } from '../sites/service';
import * as repo from './repository';

const DAY_MS = 86_400_000;
/** A scheduled time a little in the past (the form was slow) still counts as "now". */
const PAST_TOLERANCE_MS = 60_000;

/** The dedupe key of a one-time notification's single run. */
export const oneTimeRunKey = (notificationId: string) => `once:${notificationId}`;

export function toNotificationResponse(row: NotificationRow): Notification {
  return {
    id: row.id,
    site_id: row.site_id,
    type: row.type,
    source: row.source,
    title: row.title,
    message: row.message,
    destination_url: row.destination_url,
    icon_url: row.icon_url,
    image_url: row.image_url,
    segment_id: row.segment_id,
    actions: row.actions ? (JSON.parse(row.actions) as ActionButton[]) : [],
    status: row.status,
    scheduled_at: isoOrNull(row.scheduled_at),
    sent_at: isoOrNull(row.sent_at),
    completed_at: isoOrNull(row.completed_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    last_error: row.last_error,
    recurringSchedule: null,
    trigger: null,
    stats: { total: row.total_count, sent: row.sent_count, delivered: row.delivered_count, clicked: row.clicked_count, failed: row.failed_count },
  };
}

export function createNotificationsService(ctx: AppContext) {
  const { db, clock } = ctx;

  async function ownedNotification(userId: string, id: string): Promise<NotificationRow> {
    const row = await repo.findNotificationOfUser(db, userId, id);
    if (!row) throw notFound('Notification');
    return row;
  }

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

  function checkType(type: NotificationType): void {
    if (type !== 'ONE_TIME') throw badRequest(`${type} notifications are not available on this server yet`);
  }

  return {
    async list(userId: string, siteId: string, filter: { status?: NotificationStatus; type?: NotificationType }) {
      await requireOwnedSite(ctx, userId, siteId);
      const [rows, counts] = await Promise.all([repo.listNotifications(db, siteId, filter), repo.countNotificationsByStatus(db, siteId)]);
      return { notifications: rows.map(toNotificationResponse), counts };
    },

    async get(userId: string, id: string): Promise<Notification> {
      return toNotificationResponse(await ownedNotification(userId, id));
    },

    async create(userId: string, siteId: string, body: NotificationInput): Promise<Notification> {
      const site = await requireOwnedSite(ctx, userId, siteId);
      const type = body.type ?? 'ONE_TIME';
      checkType(type);
      await checkSegment(site, body.segment_id);
      const now = clock.now();
      const scheduledAt = body.scheduled_at ? parseScheduledAt(body.scheduled_at, site) : null;
      const row: NotificationRow = {
        id: crypto.randomUUID(),
        site_id: site.id,
        type,
        source: 'dashboard',
        title: body.title,
        message: body.message,
        destination_url: body.destination_url,
        icon_url: body.icon_url ?? null,
        image_url: body.image_url ?? null,
        actions: body.actions?.length ? JSON.stringify(body.actions) : null,
        segment_id: body.segment_id ?? null,
        status: scheduledAt !== null ? 'scheduled' : 'draft',
        scheduled_at: scheduledAt,
        sent_at: null,
        completed_at: null,
        last_error: null,
        total_count: 0,
        sent_count: 0,
        delivered_count: 0,
        clicked_count: 0,
        failed_count: 0,
        created_at: now,
        updated_at: now,
      };
      await db.transaction().execute(async (trx) => {
        await repo.insertNotification(trx, row);
        if (scheduledAt !== null) await createOneTimeRun(trx, row, scheduledAt, now);
      });
      if (scheduledAt !== null && scheduledAt <= now) ctx.wakeScheduler();
      return toNotificationResponse(row);
    },

    /** Spec §4: only draft and scheduled notifications can be edited. */
    async update(userId: string, id: string, body: NotificationPatchInput): Promise<Notification> {
      const existing = await ownedNotification(userId, id);
      if (existing.status !== 'draft' && existing.status !== 'scheduled') {
        throw conflict(`A ${existing.status} notification cannot be edited`);
      }
      const site = await requireOwnedSite(ctx, userId, existing.site_id);
      if (body.type !== undefined && body.type !== existing.type) {
        if (existing.status !== 'draft') throw conflict('Only a draft can change its type');
        checkType(body.type);
      }
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

      let scheduledAt: number | null | undefined;
      if (body.scheduled_at !== undefined) {
        scheduledAt = body.scheduled_at ? parseScheduledAt(body.scheduled_at, site) : null;
        changes.scheduled_at = scheduledAt;
        changes.status = scheduledAt !== null ? 'scheduled' : 'draft';
      }

      const nextScheduledAt = scheduledAt !== undefined ? scheduledAt : existing.scheduled_at;
      const nextSegmentId = body.segment_id !== undefined ? body.segment_id : existing.segment_id;
      await db.transaction().execute(async (trx) => {
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
        await repo.updateNotification(trx, id, changes);
      });
      if (scheduledAt !== undefined && scheduledAt !== null && scheduledAt <= now) ctx.wakeScheduler();
      return toNotificationResponse((await repo.findNotification(db, id))!);
    },

    /** Spec §4: only draft and scheduled notifications can be deleted. */
    async remove(userId: string, id: string): Promise<void> {
      const existing = await ownedNotification(userId, id);
      if (existing.status !== 'draft' && existing.status !== 'scheduled') {
        throw conflict(`A ${existing.status} notification cannot be deleted`);
      }
      await db.transaction().execute(async (trx) => {
        if (existing.status === 'scheduled' && existing.type === 'ONE_TIME') {
          const run = await repo.findRunByKey(trx, oneTimeRunKey(id));
          if (run && run.status !== 'pending') throw conflict('This notification is already being sent');
        }
        await repo.deleteNotification(trx, id);
      });
    },

    /** Spec §2/§4: "Send Now" is offered for drafts only. */
    async sendNow(userId: string, id: string): Promise<Notification> {
      const existing = await ownedNotification(userId, id);
      if (existing.type !== 'ONE_TIME') throw conflict('Only one-time notifications can be sent now');
      if (existing.status !== 'draft') throw conflict('Only draft notifications can be sent now');
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('notifications')
          .set({ status: 'sending', sent_at: now, scheduled_at: null, updated_at: now })
          .where('id', '=', id)
          .where('status', '=', 'draft')
          .executeTakeFirst();
        if (!Number(result.numUpdatedRows)) throw conflict('Only draft notifications can be sent now');
        await createOneTimeRun(trx, existing, now, now);
      });
      ctx.wakeScheduler();
      return toNotificationResponse((await repo.findNotification(db, id))!);
    },

    /** Spec §4: a scheduled notification can be cancelled before its send time. */
    async cancel(userId: string, id: string): Promise<Notification> {
      const existing = await ownedNotification(userId, id);
      if (existing.status !== 'scheduled') throw conflict('Only scheduled notifications can be cancelled');
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        if (existing.type === 'ONE_TIME' && !(await repo.cancelPendingRun(trx, oneTimeRunKey(id), now))) {
          throw conflict('This notification is already being sent');
        }
        await repo.updateNotification(trx, id, { status: 'cancelled', updated_at: now });
      });
      return toNotificationResponse((await repo.findNotification(db, id))!);
    },

    /** Spec §4: completed, cancelled and failed notifications can be duplicated (into a new draft). */
    async duplicate(userId: string, id: string): Promise<Notification> {
      const existing = await ownedNotification(userId, id);
      const now = clock.now();
      const copy: NotificationRow = {
        ...existing,
        id: crypto.randomUUID(),
        source: 'dashboard',
        status: 'draft',
        scheduled_at: null,
        sent_at: null,
        completed_at: null,
        last_error: null,
        total_count: 0,
        sent_count: 0,
        delivered_count: 0,
        clicked_count: 0,
        failed_count: 0,
        created_at: now,
        updated_at: now,
      };
      await repo.insertNotification(db, copy);
      return toNotificationResponse(copy);
    },

    /** Spec §4: a failed notification can be retried: its failed deliveries are sent again. */
    async retry(userId: string, id: string): Promise<Notification> {
      const existing = await ownedNotification(userId, id);
      if (existing.status !== 'failed') throw conflict('Only failed notifications can be retried');
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        const run = await repo.findRunByKey(trx, oneTimeRunKey(id));
        if (!run || !(await repo.reopenFailedRun(trx, run, now))) throw conflict('There is nothing to retry');
        await repo.updateNotification(trx, id, { status: 'sending', last_error: null, completed_at: null, updated_at: now });
      });
      ctx.wakeScheduler();
      return toNotificationResponse((await repo.findNotification(db, id))!);
    },

    async performance(userId: string, id: string): Promise<NotificationPerformance> {
      const row = await ownedNotification(userId, id);
      const runs = await repo.listRunsOfNotification(db, id);
      return {
        notification_id: row.id,
        total: row.total_count,
        sent: row.sent_count,
        delivered: row.delivered_count,
        clicked: row.clicked_count,
        failed: row.failed_count,
        click_rate: rate(row.clicked_count, row.delivered_count),
        delivery_rate: rate(row.delivered_count, row.sent_count),
        last_error: row.last_error,
        runs: runs.map(toRunSummary),
      };
    },
  };
}

function toRunSummary(run: RunRow) {
  return {
    id: run.id,
    status: run.status,
    due_at: iso(run.due_at),
    started_at: isoOrNull(run.started_at),
    finished_at: isoOrNull(run.finished_at),
    last_error: run.last_error,
    stats: { total: run.total_count, sent: run.sent_count, delivered: run.delivered_count, clicked: run.clicked_count, failed: run.failed_count },
  };
}

async function createOneTimeRun(db: Parameters<typeof insertRun>[0], notification: Pick<NotificationRow, 'id' | 'site_id' | 'segment_id'>, dueAt: number, now: number): Promise<void> {
  const created = await insertRun(db, {
    id: crypto.randomUUID(),
    notification_id: notification.id,
    site_id: notification.site_id,
    dedupe_key: oneTimeRunKey(notification.id),
    due_at: dueAt,
    segment_id: notification.segment_id,
    subscriber_id: null,
    created_at: now,
  });
  if (!created) throw conflict('This notification has already been sent');
}
