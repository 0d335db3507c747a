// The API shape of a notification (spec §3), with its schedule or trigger.
import type { LocalTimeProgress, Notification } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { AbTestRow, Database, NotificationRow, NotificationTriggerRow, RecurringScheduleRow } from '../../db/schema';
import { outcomeCountsOf } from '../../delivery/run-counters';
import { iso, isoOrNull } from '../../platform/responses';
import { abFieldsOf } from './ab-test';
import { abTestsOfNotifications } from './ab-test-repository';
import { actionsOf } from './create';
import * as repo from './automation-repository';
import { localTimeProgressOf } from './local-time-progress';
import { compactedNotifications, findNotification } from './repository';

// The outcome counts are the engine's (delivery/run-counters.ts); the report reads them from here too.
export { outcomeCountsOf };

/** A notification's schedule or trigger, loaded next to it (issue 4), and a triggered one's number of firings. */
export interface NotificationAutomation {
  schedule?: RecurringScheduleRow;
  trigger?: NotificationTriggerRow;
  fireCount?: number;
  /** The zones of its latest send split by zone (local-time-progress.ts). */
  zoneProgress?: LocalTimeProgress;
  /** Its A/B test (variants and settings), if it has one. */
  abTest?: AbTestRow;
  /** A failed (or partly failed) send whose latest run retention compacted: nothing to retry. */
  deliveriesCompacted?: boolean;
}

/** Spec §3 recurringSchedule; `nextRunAt` only while the schedule will fire (scheduled and active). */
function toRecurringScheduleResponse(row: NotificationRow, schedule: RecurringScheduleRow): NonNullable<Notification['recurringSchedule']> {
  const live = row.status === 'scheduled' && schedule.is_active === 1;
  return {
    intervalType: schedule.interval_type,
    intervalValue: schedule.interval_value,
    startDate: iso(schedule.start_at),
    endDate: isoOrNull(schedule.end_at),
    isActive: schedule.is_active === 1,
    nextRunAt: live ? isoOrNull(schedule.next_run_at) : null,
  };
}

export function toNotificationResponse(row: NotificationRow, automation: NotificationAutomation = {}): Notification {
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
    actions: actionsOf(row),
    ttl_seconds: row.ttl_seconds,
    urgency: row.urgency,
    topic: row.topic,
    require_interaction: row.require_interaction === 1,
    frequency_cap_exempt: row.frequency_cap_exempt === 1,
    throttle_per_minute: row.throttle_per_minute,
    delivery: { mode: row.delivery_mode, local_time: row.local_time },
    quiet_hours_exempt: row.quiet_hours_exempt === 1,
    local_time_progress: automation.zoneProgress ?? null,
    quiet_hours_deferred: row.quiet_hours_deferred_count,
    deliveries_compacted: automation.deliveriesCompacted ?? false,
    status: row.status,
    scheduled_at: isoOrNull(row.scheduled_at),
    sent_at: isoOrNull(row.sent_at),
    completed_at: isoOrNull(row.completed_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    last_error: row.last_error,
    recurringSchedule: row.type === 'RECURRING' && automation.schedule ? toRecurringScheduleResponse(row, automation.schedule) : null,
    trigger: row.type === 'TRIGGERED' && automation.trigger ? { event: automation.trigger.event_name, delay_minutes: automation.trigger.delay_minutes } : null,
    stats: { total: row.total_count, sent: row.sent_count, delivered: row.delivered_count, clicked: row.clicked_count, failed: row.failed_count },
    counts: outcomeCountsOf(row),
    fire_count: row.type === 'TRIGGERED' ? (automation.fireCount ?? 0) + row.removed_run_count : null,
    ...abFieldsOf(automation.abTest),
  };
}

/** Maps notifications to responses with their schedules, triggers, firings, zones, A/B tests and compaction: six queries for any number of rows (no N+1). */
export async function toNotificationResponses(db: Kysely<Database> | Transaction<Database>, rows: NotificationRow[]): Promise<Notification[]> {
  const recurringIds = rows.filter((row) => row.type === 'RECURRING').map((row) => row.id);
  const triggeredIds = rows.filter((row) => row.type === 'TRIGGERED').map((row) => row.id);
  const localTimeIds = rows.filter((row) => row.delivery_mode === 'subscriber_local_time').map((row) => row.id);
  const oneTimeIds = rows.filter((row) => row.type === 'ONE_TIME').map((row) => row.id);
  // Only a send that failed in part could be retried: only those are asked whether their rows are totals now.
  const retryableIds = rows.filter((row) => row.status === 'failed' || row.status === 'completed_with_errors').map((row) => row.id);
  const [schedules, triggers, fireCounts, zoneProgress, abTests, compacted] = await Promise.all([
    repo.schedulesOfNotifications(db, recurringIds),
    repo.triggersOfNotifications(db, triggeredIds),
    repo.runCountsOfNotifications(db, triggeredIds),
    localTimeProgressOf(db, localTimeIds),
    abTestsOfNotifications(db, oneTimeIds),
    compactedNotifications(db, retryableIds),
  ]);
  return rows.map((row) =>
    toNotificationResponse(row, {
      schedule: schedules.get(row.id),
      trigger: triggers.get(row.id),
      fireCount: fireCounts.get(row.id),
      zoneProgress: zoneProgress.get(row.id),
      abTest: abTests.get(row.id),
      deliveriesCompacted: compacted.has(row.id),
    }),
  );
}

/** A stored notification as the API shows it, read again after a change. */
export async function loadNotificationResponse(db: Kysely<Database>, id: string): Promise<Notification> {
  const [response] = await toNotificationResponses(db, [(await findNotification(db, id))!]);
  return response!;
}
