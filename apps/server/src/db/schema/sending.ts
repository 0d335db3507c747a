// What is sent: notifications, their runs (one per send), the per-subscriber
// deliveries of each run, the hourly rollup, and the schedules and triggers
// that create runs.
import type { DeliveryMode, FailureReason, NotificationSource, NotificationStatus, NotificationType, NotificationUrgency, PushServiceName, RecurringInterval, SkipCause } from '@herald/contracts';
import type { ColumnType, Generated } from 'kysely';
import type { Counter, Flag, Millis } from './columns';

export interface NotificationsTable {
  id: string;
  site_id: string;
  type: NotificationType;
  source: NotificationSource;
  title: string;
  message: string;
  destination_url: string;
  icon_url: string | null;
  image_url: string | null;
  /** JSON array of up to two {title, url} action buttons. */
  actions: string | null;
  /** RFC 8030 TTL in seconds (docs/web-push.md, "TTL, Urgency and Topic"); the database default is a day. */
  ttl_seconds: Generated<number>;
  /** Database default: normal. */
  urgency: Generated<NotificationUrgency>;
  /** The owner's topic name: sends with the same one replace each other; null, each send has its own Topic. */
  topic: string | null;
  require_interaction: Generated<Flag>;
  /** 1: sent even to subscribers at the site's frequency cap. */
  frequency_cap_exempt: Generated<Flag>;
  /** At most this many pushes a minute (docs/delivery.md, "Throttled sends"); null: no throttle. */
  throttle_per_minute: number | null;
  /** at_once, or subscriber_local_time: at `local_time` in each subscriber's zone (docs/delivery.md, "Local-time delivery"). */
  delivery_mode: Generated<DeliveryMode>;
  /** "HH:MM" when delivery_mode is subscriber_local_time, else null. */
  local_time: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1: sent even inside the site's quiet hours ("send anyway"). */
  quiet_hours_exempt: Generated<Flag>;
  /** Subscribers whose push waited for the end of the site's quiet hours (docs/delivery.md, "Quiet hours"). */
  quiet_hours_deferred_count: Counter;
  segment_id: string | null;
  status: NotificationStatus;
  scheduled_at: Millis | null;
  sent_at: Millis | null;
  completed_at: Millis | null;
  last_error: string | null;
  total_count: Counter;
  sent_count: Counter;
  delivered_count: Counter;
  clicked_count: Counter;
  /** Deliveries that will not arrive, expired and skipped excluded. */
  failed_count: Counter;
  /** Deliveries the push service answered 404/410 for (their subscribers were deactivated). */
  expired_count: Counter;
  /** Deliveries not sent because the subscriber was no longer active. */
  skipped_count: Counter;
  /** Of skipped_count, the deliveries skipped for the site's frequency cap. */
  skipped_capped_count: Counter;
  /** Its one-subscriber runs (trigger firings, welcome steps) retention removed after compacting them (migration 0033). */
  removed_run_count: Counter;
  created_at: Millis;
  updated_at: Millis;
}

/** A finished run is completed, completed_with_errors (some failed) or failed (none accepted). */
export type RunStatus = 'pending' | 'sending' | 'completed' | 'completed_with_errors' | 'failed' | 'cancelled';

/**
 * One send of a notification: a one-time send, one occurrence of a recurring
 * schedule, one trigger firing, one drip step for one subscriber, one feed item.
 * `dedupe_key` is unique, so creating the same run twice is impossible.
 */
export interface NotificationRunsTable {
  id: string;
  /** The run's number, unique: what its delivery rows name it by (migration 0035; given on insert). */
  seq: Generated<number>;
  notification_id: string;
  site_id: string;
  dedupe_key: string;
  status: RunStatus;
  due_at: Millis;
  segment_id: string | null;
  /** Set for runs aimed at one subscriber (triggered events, drip steps). */
  subscriber_id: string | null;
  /** The run this one follows (the previous step of a welcome campaign): not claimed while that run is pending or sending. */
  after_run_id: string | null;
  /** JSON array of the subscriber time zones (null for "no zone") this run reaches; null: every subscriber (docs/delivery.md, "Local-time delivery"). */
  zones: ColumnType<string | null, string | null | undefined, string | null>;
  /** The run a send split by zone came from (itself for the first part): the zones of one send are counted together. */
  zone_send_id: ColumnType<string | null, string | null | undefined, string | null>;
  fanout_cursor: string | null;
  fanout_done: Flag;
  lease_owner: string | null;
  lease_until: Millis | null;
  started_at: Millis | null;
  /** The latest manual Retry of this run (migration 0040): its re-sent deliveries' lifetime runs from here. */
  retried_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  finished_at: Millis | null;
  last_error: string | null;
  total_count: Counter;
  sent_count: Counter;
  delivered_count: Counter;
  clicked_count: Counter;
  failed_count: Counter;
  expired_count: Counter;
  skipped_count: Counter;
  /** A throttled run's current minute (docs/delivery.md, "Throttled sends"): when it began, null before the first push. */
  throttle_window_start: Millis | null;
  /** Pushes granted in that minute, retries included. */
  throttle_window_used: Counter;
  created_at: Millis;
  /** When retention took the run to compact its delivery rows (migration 0027); null: its rows are all there. */
  deliveries_compacted_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
}

/** gone = expired (404/410); skipped = not sent, the subscriber was inactive by then. */
export type DeliveryStatus = 'pending' | 'sent' | 'failed' | 'gone' | 'skipped';

export interface DeliveriesTable {
  id: Generated<number>;
  /** Its run's notification_runs.seq (migration 0035): an integer, not the run's UUID, in every row and in the (run, subscriber) index. */
  run_seq: number;
  /** Its subscriber's subscribers.seq (migration 0036): an integer, not the subscriber's UUID, in every row and both subscriber indexes. */
  subscriber_seq: number;
  status: DeliveryStatus;
  attempts: Counter;
  next_attempt_at: Millis | null;
  lease_until: Millis | null;
  /** Of a throttled run: the minute it was granted a push in (docs/delivery.md, "Throttled sends"); null once claimed. */
  throttle_window: Millis | null;
  error: string | null;
  /** The code of its last failure (also while it waits for a retry), or the skip cause. */
  reason: FailureReason | SkipCause | null;
  /** The push service of its last failure. */
  push_service: PushServiceName | null;
  sent_at: Millis | null;
  delivered_at: Millis | null;
  clicked_at: Millis | null;
  created_at: Millis;
  /** The A/B variant it carries (migration 0026); null: not an A/B send. */
  variant_index: ColumnType<number | null, number | null | undefined, number | null>;
}

/** An A/B test of a one-time notification (migration 0026; docs/delivery.md, "A/B tests"). */
export interface AbTestsTable {
  notification_id: string;
  site_id: string;
  /** JSON array of 2–4 {title, message, destination_url, image_url}. */
  variants: string;
  /** Null: every variant to the whole audience, split evenly. */
  sample_percent: number | null;
  decide_after_minutes: number | null;
  decide: ColumnType<'auto' | 'manual', 'auto' | 'manual' | undefined, 'auto' | 'manual'>;
  status: ColumnType<'testing' | 'decided', 'testing' | 'decided' | undefined, 'testing' | 'decided'>;
  winner_index: number | null;
  decided_at: Millis | null;
  decided_by: 'auto' | 'manual' | null;
  significant: Flag | null;
  /** The audience size the sample was drawn from, fixed at the sample's first fan-out page. */
  sample_audience: number | null;
  /** How many of that audience the sample's fan-out has looked at so far. */
  sample_seen: Counter;
  /** How many of them it put in the sample so far. */
  sample_picked: Counter;
  created_at: Millis;
  updated_at: Millis;
}

/** Hourly rollup per site, kept up to date as events happen (dashboard reads only this). */
export interface StatsHourlyTable {
  site_id: string;
  hour_start: Millis;
  sent: Counter;
  delivered: Counter;
  clicked: Counter;
  failed: Counter;
  subscribed: Counter;
  /** Every subscription lost, whatever the cause (unsubscribed, removed, gone at the push service). */
  unsubscribed: Counter;
  /** Of those, subscribers deactivated because their push service said the subscription is gone or invalid. */
  lost_at_push_service: Counter;
}

/** Per notification, reason and push service: the failed deliveries, kept in the result transaction. */
export interface NotificationFailuresTable {
  notification_id: string;
  reason: FailureReason;
  push_service: PushServiceName;
  count: Counter;
  sample_error: string | null;
}

export type DeliveryHealthOutcome = 'accepted' | 'failed' | 'expired';

/**
 * Per site, hour, push service and outcome: what the dashboard's Delivery
 * section reads. `reason` is the failure code ('' otherwise); accepted rows
 * are split by `latency_bucket`, the time from due to accepted (a histogram:
 * medians come from it).
 */
export interface DeliveryStatsHourlyTable {
  site_id: string;
  hour_start: Millis;
  push_service: PushServiceName;
  outcome: DeliveryHealthOutcome;
  reason: FailureReason | '';
  latency_bucket: number;
  count: Counter;
}

/**
 * The schedule of a RECURRING notification. Occurrence k falls at
 * `start_local` + k × interval as a wall time in `timezone` (pinned when the
 * schedule was set, so a later change of the site's timezone does not move it).
 */
export interface RecurringSchedulesTable {
  id: string;
  notification_id: string;
  site_id: string;
  interval_type: RecurringInterval;
  interval_value: number;
  timezone: string;
  /** The first occurrence as a wall time, "YYYY-MM-DDTHH:MM:SS" (kept because a DST gap moves the instant, not the wall time). */
  start_local: string;
  start_at: Millis;
  end_at: Millis | null;
  is_active: Flag;
  next_occurrence_index: number;
  /** Instant of occurrence `next_occurrence_index`; null when the schedule has no occurrence left. */
  next_run_at: Millis | null;
  last_occurrence_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface NotificationTriggersTable {
  notification_id: string;
  site_id: string;
  event_name: string;
  delay_minutes: number;
  created_at: Millis;
  updated_at: Millis;
}
