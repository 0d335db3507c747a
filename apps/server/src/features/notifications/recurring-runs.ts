// Turns due occurrences of recurring schedules into runs (a due-work source of
// the scheduler, engine primer "Model"). Each occurrence is claimed with a
// compare-and-set on the schedule's `next_occurrence_index` and its run is
// created with the dedupe key `recurring:<scheduleId>:<index>` in the same
// transaction, so two schedulers, restarts and retries create it once.
//
// Missed occurrences (the scheduler was down, or the clock jumped forward):
// only the LATEST missed occurrence is sent, once, late; the earlier ones are
// skipped. Sending every missed one would push a burst of stale copies of the
// same message (a daily notification after a week of downtime = 7 pushes in a
// row), against the spec's "1-2 pushes per day at most" advice; skipping all
// of them would silently drop a send the owner scheduled (docs/delivery.md).
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context';
import type { Database, RecurringScheduleRow } from '../../db/schema';
import { insertRun } from '../../delivery/runs';
import type { DueWorkSource } from '../../jobs/scheduler';
import { lastOccurrenceIndexAtOrBefore, occurrenceAt, parseWallTime, type ScheduleTiming } from './recurring-schedule';
import * as repo from './automation-repository';

/** Schedules handled per query; a tick keeps going while full pages come back, up to MAX_PAGES_PER_TICK. */
const DUE_PAGE_SIZE = 100;
const MAX_PAGES_PER_TICK = 20;

export const recurringRunKey = (scheduleId: string, occurrenceIndex: number) => `recurring:${scheduleId}:${occurrenceIndex}`;

export function timingOf(schedule: Pick<RecurringScheduleRow, 'interval_type' | 'interval_value' | 'timezone' | 'start_local'>): ScheduleTiming {
  return {
    intervalType: schedule.interval_type,
    intervalValue: schedule.interval_value,
    timezone: schedule.timezone,
    start: parseWallTime(schedule.start_local),
  };
}

export type OccurrenceOutcome = { fired: false } | { fired: true; occurrenceIndex: number; skipped: number; finished: boolean };

/**
 * Fires the latest due occurrence of one schedule (see the rule above). Returns
 * what this call did; `fired: false` when another scheduler got there first or
 * the schedule changed meanwhile.
 */
export async function fireDueOccurrence(db: Kysely<Database>, due: repo.DueSchedule, now: number): Promise<OccurrenceOutcome> {
  const { schedule, segmentId } = due;
  const timing = timingOf(schedule);
  const expectedIndex = schedule.next_occurrence_index;
  const horizon = schedule.end_at === null ? now : Math.min(now, schedule.end_at);
  const index = lastOccurrenceIndexAtOrBefore(timing, horizon, expectedIndex);

  return db.transaction().execute(async (trx): Promise<OccurrenceOutcome> => {
    if (index === undefined) {
      // The next occurrence lies past the end date (only reachable if the end
      // moved under a stale read): nothing is left to send.
      const claimed = await repo.claimScheduleOccurrence(trx, schedule.id, expectedIndex, {
        index: expectedIndex,
        runAt: null,
        lastOccurrenceAt: schedule.last_occurrence_at,
        isActive: false,
        now,
      });
      if (claimed) await repo.endRecurringNotification(trx, schedule.notification_id, now);
      return { fired: false };
    }
    const occurrence = occurrenceAt(timing, index);
    const nextAt = occurrenceAt(timing, index + 1);
    const finished = schedule.end_at !== null && nextAt > schedule.end_at;
    const claimed = await repo.claimScheduleOccurrence(trx, schedule.id, expectedIndex, {
      index: index + 1,
      runAt: finished ? null : nextAt,
      lastOccurrenceAt: occurrence,
      isActive: !finished,
      now,
    });
    if (!claimed) return { fired: false };
    await insertRun(trx, {
      id: crypto.randomUUID(),
      notification_id: schedule.notification_id,
      site_id: schedule.site_id,
      dedupe_key: recurringRunKey(schedule.id, index),
      due_at: occurrence,
      segment_id: segmentId,
      subscriber_id: null,
      created_at: now,
    });
    // Its "Last sent" moves to this occurrence once a push service accepts a push of it (addToRunCounters).
    if (finished) await repo.endRecurringNotification(trx, schedule.notification_id, now);
    return { fired: true, occurrenceIndex: index, skipped: index - expectedIndex, finished };
  });
}

/** The scheduler's due-work source for recurring notifications (registered in engine.ts). */
export function recurringScheduleSource(ctx: Pick<AppContext, 'db' | 'log'>): DueWorkSource {
  return {
    name: 'recurring-schedules',
    async runDue(now) {
      // A schedule paused until past its end date ends too (spec §4): it is never "scheduled" for ever.
      for (const notificationId of await repo.findPausedSchedulesPastEnd(ctx.db, now, DUE_PAGE_SIZE)) {
        await ctx.db.transaction().execute((trx) => repo.endRecurringNotification(trx, notificationId, now));
      }
      for (let page = 0; page < MAX_PAGES_PER_TICK; page++) {
        const due = await repo.findDueSchedules(ctx.db, now, DUE_PAGE_SIZE);
        for (const item of due) {
          const outcome = await fireDueOccurrence(ctx.db, item, now);
          if (outcome.fired && outcome.skipped > 0) {
            ctx.log.warn(
              { notificationId: item.schedule.notification_id, scheduleId: item.schedule.id, skipped: outcome.skipped },
              'recurring notification: missed occurrences skipped; only the latest one is sent',
            );
          }
        }
        if (due.length < DUE_PAGE_SIZE) return;
      }
    },
  };
}
