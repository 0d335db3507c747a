// The actions of the notification state machine (spec §4) after a notification
// is saved: send a draft now, cancel, duplicate into a new draft, retry what
// failed. Each is one transaction with its audit entry.
import crypto from 'node:crypto';
import type { Notification } from '@herald/contracts';
import type { AppContext } from '../../context';
import { inKeyOrder } from '../../db/lock-order';
import { conflict } from '../../platform/errors';
import { recordAudit } from '../audit-log/record';
import { copyAbTest } from './ab-test';
import { audited, changeableNotification } from './access';
import * as automation from './automation-repository';
import { actionsOf, createNotification, deliveryOptionsOf } from './create';
import { runsOfZoneSend } from './local-time-progress';
import { createOneTimeRun, oneTimeRunKey } from './one-time-run';
import * as repo from './repository';
import { loadNotificationResponse, toNotificationResponse } from './responses';

/** Spec §4: a draft or scheduled notification is edited, a sending one only viewed; the others can be duplicated. */
const DUPLICABLE = new Set(['completed', 'completed_with_errors', 'cancelled', 'failed']);

export function createNotificationActions(ctx: AppContext) {
  const { db, clock } = ctx;

  return {
    /** Spec §2/§4: "Send Now" is offered for drafts only. */
    async sendNow(userId: string, id: string): Promise<Notification> {
      const existing = await changeableNotification(db, userId, id);
      if (existing.type !== 'ONE_TIME') throw conflict('Only one-time notifications can be sent now');
      if (existing.status !== 'draft') throw conflict('Only draft notifications can be sent now');
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('notifications')
          // sent_at waits for the first push a push service accepts ("Sent <date>" only once something was).
          .set({ status: 'sending', scheduled_at: null, updated_at: now })
          .where('id', '=', id)
          .where('status', '=', 'draft')
          .executeTakeFirst();
        if (!Number(result.numUpdatedRows)) throw conflict('Only draft notifications can be sent now');
        await createOneTimeRun(trx, existing, now, now);
        await recordAudit(ctx, audited(userId, existing, 'sent', { detail: { segment_id: existing.segment_id } }), trx);
      });
      ctx.wakeScheduler();
      return toNotificationResponse((await repo.findNotification(db, id))!);
    },

    /**
     * Spec §4: a scheduled notification can be cancelled before its send time.
     * Recurring: the schedule stops (an occurrence already being sent finishes).
     * Triggered: disarmed; sends still waiting for their delay are cancelled too.
     * A send split by zone under way (a local time, or quiet hours holding some
     * zones: docs/delivery.md, "Quiet hours"): the zones not yet due are
     * cancelled; those already sent or sending finish, and their counts stay.
     */
    async cancel(userId: string, id: string): Promise<Notification> {
      const existing = await changeableNotification(db, userId, id);
      const splitByZone = existing.delivery_mode === 'subscriber_local_time' || existing.quiet_hours_deferred_count > 0;
      const zonesUnderWay = existing.type === 'ONE_TIME' && splitByZone && existing.status === 'sending';
      if (existing.status !== 'scheduled' && !zonesUnderWay) throw conflict('Only scheduled notifications can be cancelled');
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        if (zonesUnderWay) {
          // The notification row first: a send being split by zone takes the same row lock (delivery/zone-runs.ts), so no zone run is created unseen by this cancel.
          await repo.updateNotification(trx, id, { status: 'cancelled', updated_at: now });
          if (!(await repo.cancelPendingRunsOfNotification(trx, id, now))) throw conflict('Every zone of this send has already started');
        } else if (existing.type === 'ONE_TIME' && !(await repo.cancelPendingRun(trx, oneTimeRunKey(id), now))) {
          throw conflict('This notification is already being sent');
        }
        if (existing.type === 'RECURRING') {
          const schedule = await automation.findScheduleOfNotification(trx, id);
          if (schedule) await automation.updateSchedule(trx, schedule.id, { is_active: 0, next_run_at: null, updated_at: now });
        }
        // The notification's row before its waiting runs: an event firing a trigger share-locks that row after making
        // its runs (triggered.ts, fireTriggers), so they are committed and cancelled here, or the event cancels them.
        await repo.updateNotification(trx, id, { status: 'cancelled', updated_at: now });
        if (existing.type !== 'ONE_TIME') await repo.cancelPendingRunsOfNotification(trx, id, now);
        await recordAudit(ctx, audited(userId, existing, 'cancelled'), trx);
      });
      return loadNotificationResponse(db, id);
    },

    /** Spec §4: completed, cancelled and failed notifications can be duplicated (into a new draft). */
    async duplicate(userId: string, id: string): Promise<Notification> {
      const existing = await changeableNotification(db, userId, id);
      if (!DUPLICABLE.has(existing.status)) throw conflict('Only completed, cancelled and failed notifications can be duplicated');
      const now = clock.now();
      const [schedule, trigger] = await Promise.all([automation.findScheduleOfNotification(db, id), automation.findTriggerOfNotification(db, id)]);
      const copy = await db.transaction().execute(async (trx) => {
        const row = await createNotification(
          trx,
          {
            siteId: existing.site_id,
            type: existing.type,
            source: 'dashboard',
            content: { ...existing, actions: actionsOf(existing) },
            delivery: deliveryOptionsOf(existing),
            segmentId: existing.segment_id,
            status: 'draft',
          },
          now,
        );
        // The copy keeps its schedule or trigger settings; it starts sending once it is saved as scheduled (PATCH).
        if (existing.type === 'RECURRING' && schedule) {
          await automation.insertSchedule(trx, {
            ...schedule,
            id: crypto.randomUUID(),
            notification_id: row.id,
            is_active: 1,
            next_occurrence_index: 0,
            next_run_at: null,
            last_occurrence_at: null,
            created_at: now,
            updated_at: now,
          });
        }
        if (existing.type === 'TRIGGERED' && trigger) await automation.upsertTrigger(trx, { ...trigger, notification_id: row.id, created_at: now, updated_at: now });
        await copyAbTest(trx, existing.id, row, now);
        await recordAudit(ctx, audited(userId, row, 'duplicated', { detail: { from: existing.id } }), trx);
        return row;
      });
      return loadNotificationResponse(db, copy.id);
    },

    /**
     * Spec §4: a failed notification can be retried: its failed deliveries are
     * sent again. So can one completed with errors (the failed part of it).
     */
    async retry(userId: string, id: string): Promise<Notification> {
      const existing = await changeableNotification(db, userId, id);
      if (existing.status !== 'failed' && existing.status !== 'completed_with_errors') throw conflict('Only failed notifications (or ones completed with errors) can be retried');
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        // The one-time send's run, or (feed items) the run that created it: the latest.
        const run = await repo.latestRunOfNotification(trx, id);
        // A one-time send retries what failed in every run of it: each zone of a send split by zone (docs/delivery.md,
        // "Local-time delivery"), an A/B test's sample and its rest. So does a recurring notification that ended with
        // errors: its status is that of all its occurrences (their counters), so is its Retry.
        let reopened = 0;
        const wholeSend = existing.type === 'ONE_TIME' || existing.type === 'RECURRING';
        const runsOfSend = wholeSend ? await repo.runsOfNotification(trx, id) : run?.zone_send_id ? await runsOfZoneSend(trx, run.zone_send_id) : run ? [run] : [];
        // In key order: each run's row is locked as it is reopened, as retention locks the runs it compacts (lock-order.ts).
        const failedRuns = inKeyOrder(runsOfSend, (candidate) => [Number(candidate.seq)]);
        for (const failedRun of failedRuns) reopened += await repo.reopenFailedRun(trx, ctx.dbKind, failedRun, now);
        // Retention compacted the send's rows (docs/storage.md, "Retention"): say so rather than nothing.
        if (!reopened && run?.deliveries_compacted_at != null) throw conflict(`There is nothing to retry: deliveries are kept ${ctx.config.deliveryRetentionDays} days after a send finished, and this send's are now totals`);
        if (!reopened) throw conflict('There is nothing to retry');
        await repo.updateNotification(trx, id, { status: 'sending', last_error: null, completed_at: null, updated_at: now });
        await recordAudit(ctx, audited(userId, existing, 'retried'), trx);
      });
      ctx.wakeScheduler();
      return toNotificationResponse((await repo.findNotification(db, id))!);
    },
  };
}
