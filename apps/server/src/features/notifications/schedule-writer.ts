// Writes a RECURRING notification's schedule (spec §3 recurringSchedule, §4):
// new timing starts a new schedule row from now on, never re-sending an
// occurrence the old one already sent; is_active alone pauses or resumes.
import crypto from 'node:crypto';
import type { Insertable, Transaction } from 'kysely';
import type { Database, NotificationRow, RecurringScheduleRow, RecurringSchedulesTable, SiteRow } from '../../db/schema';
import { badRequest } from '../../platform/errors';
import { ScheduleInputError, nextOccurrence, readScheduleInput, sameScheduleSettings, type ScheduleInput, type ScheduleSettings } from './recurring-schedule';
import * as repo from './automation-repository';

/** A scheduled time a little in the past (the form was slow) still counts as "now". */
export const PAST_TOLERANCE_MS = 60_000;

function settingsOf(schedule: RecurringScheduleRow): ScheduleSettings {
  return {
    intervalType: schedule.interval_type,
    intervalValue: schedule.interval_value,
    timezone: schedule.timezone,
    startLocal: schedule.start_local,
    startAt: schedule.start_at,
    endAt: schedule.end_at,
  };
}

/** Reads a schedule from the API, turning its validation errors into 400s. */
export function readSchedule(input: ScheduleInput, stored: ScheduleSettings | undefined, site: SiteRow): ScheduleSettings {
  try {
    return readScheduleInput(input, stored, site.timezone);
  } catch (error) {
    if (error instanceof ScheduleInputError) throw badRequest(error.message);
    throw error;
  }
}

const NO_OCCURRENCE_LEFT = 'The end date has passed: this schedule has no occurrence left to send';

/** A schedule row whose next occurrence is the first at or after `notBefore` (400 when the end date comes first). */
export function newScheduleRow(
  notification: Pick<NotificationRow, 'id' | 'site_id'>,
  settings: ScheduleSettings,
  isActive: boolean,
  notBefore: number,
  lastOccurrenceAt: number | null,
  now: number,
): Insertable<RecurringSchedulesTable> {
  const next = nextOccurrence(settings, notBefore);
  if (!next) throw badRequest(NO_OCCURRENCE_LEFT);
  return {
    id: crypto.randomUUID(),
    notification_id: notification.id,
    site_id: notification.site_id,
    interval_type: settings.intervalType,
    interval_value: settings.intervalValue,
    timezone: settings.timezone,
    start_local: settings.startLocal,
    start_at: settings.startAt,
    end_at: settings.endAt,
    is_active: isActive ? 1 : 0,
    next_occurrence_index: next.index,
    next_run_at: next.at,
    last_occurrence_at: lastOccurrenceAt,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Sets or changes a recurring notification's schedule inside the caller's
 * transaction. New timing (or a draft being scheduled) gets a new schedule
 * row whose first occurrence is the first one from now on, never an instant
 * the old schedule already sent; `is_active` alone pauses or resumes.
 */
export async function writeRecurringSchedule(
  trx: Transaction<Database>,
  notification: NotificationRow,
  site: SiteRow,
  input: ScheduleInput & { is_active?: boolean },
  becomesScheduled: boolean,
  now: number,
): Promise<void> {
  const stored = await repo.findScheduleOfNotification(trx, notification.id);
  const storedSettings = stored ? settingsOf(stored) : undefined;
  const settings = readSchedule(input, storedSettings, site);
  const isActive = input.is_active ?? (stored ? stored.is_active === 1 : true);

  if (!stored || !storedSettings || becomesScheduled || !sameScheduleSettings(settings, storedSettings)) {
    const removed = await repo.deleteScheduleReturningLastOccurrence(trx, notification.id);
    const lastOccurrenceAt = removed?.lastOccurrenceAt ?? null;
    // A start "now" from a slow form still counts; an occurrence already sent is never sent again.
    const notBefore = Math.max(now - PAST_TOLERANCE_MS, lastOccurrenceAt === null ? -Infinity : lastOccurrenceAt + 1);
    await repo.insertSchedule(trx, newScheduleRow(notification, settings, isActive, notBefore, lastOccurrenceAt, now));
    return;
  }
  const wasActive = stored.is_active === 1;
  if (isActive === wasActive) return;
  if (!isActive) {
    await repo.updateSchedule(trx, stored.id, { is_active: 0, updated_at: now }, true);
    return;
  }
  // Resume: from now on; occurrences that fell while paused are not sent.
  const next = nextOccurrence(settings, now + 1, stored.next_occurrence_index);
  if (!next) throw badRequest(`${NO_OCCURRENCE_LEFT}; change the end date to resume it`);
  await repo.updateSchedule(trx, stored.id, { is_active: 1, next_occurrence_index: next.index, next_run_at: next.at, updated_at: now }, false);
}
