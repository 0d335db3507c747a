// Kysely table types. Conventions (the same on SQLite and PostgreSQL):
// - ids are text (random UUIDs), except deliveries, which use an integer key
//   because there is one row per (run, subscriber) and they are many;
// - every *_at column is a bigint of epoch milliseconds (UTC);
// - booleans are integers 0/1; JSON documents are text.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** A bigint column: PostgreSQL returns int8 as a string unless told otherwise (see database.ts). */
type Millis = number;
type Flag = number;

export interface UsersTable {
  id: string;
  name: string;
  email: string;
  password_hash: string;
  email_verified_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface SessionsTable {
  /** sha256 of the bearer token; the token itself is never stored. */
  token_hash: string;
  user_id: string;
  created_at: Millis;
  expires_at: Millis;
}

export interface UserTokensTable {
  /** sha256 of the emailed token. */
  token_hash: string;
  purpose: 'reset' | 'verify' | 'setup';
  user_id: string | null;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

export interface RateLimitsTable {
  key: string;
  window_start: Millis;
  hits: number;
}

export interface SitesTable {
  id: string;
  user_id: string;
  name: string;
  url: string;
  icon: string | null;
  language: string;
  timezone: string;
  value_currency: string;
  value_per_subscriber: number;
  value_per_click: number;
  vapid_public_key: string;
  vapid_private_key: string;
  active_subscriber_count: ColumnType<number, number | undefined, number>;
  created_at: Millis;
  updated_at: Millis;
}

export interface SubscribersTable {
  id: string;
  site_id: string;
  endpoint: string;
  /** sha256 of the endpoint: endpoints are long, the unique index stays small. */
  endpoint_hash: string;
  p256dh: string;
  auth: string;
  browser: string | null;
  os: string | null;
  country: string | null;
  language: string | null;
  timezone: string | null;
  user_agent: string | null;
  external_id: string | null;
  is_active: Flag;
  subscribed_at: Millis;
  last_seen_at: Millis | null;
  unsubscribed_at: Millis | null;
  updated_at: Millis;
}

export interface SubscriberTagsTable {
  subscriber_id: string;
  site_id: string;
  tag: string;
}

export type NotificationType = 'ONE_TIME' | 'RECURRING' | 'TRIGGERED';
export type NotificationStatus = 'draft' | 'scheduled' | 'sending' | 'completed' | 'cancelled' | 'failed';
export type NotificationSource = 'dashboard' | 'campaign' | 'rss';

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
  segment_id: string | null;
  status: NotificationStatus;
  scheduled_at: Millis | null;
  sent_at: Millis | null;
  completed_at: Millis | null;
  last_error: string | null;
  total_count: ColumnType<number, number | undefined, number>;
  sent_count: ColumnType<number, number | undefined, number>;
  delivered_count: ColumnType<number, number | undefined, number>;
  clicked_count: ColumnType<number, number | undefined, number>;
  failed_count: ColumnType<number, number | undefined, number>;
  created_at: Millis;
  updated_at: Millis;
}

export type RunStatus = 'pending' | 'sending' | 'completed' | 'failed' | 'cancelled';

/**
 * One send of a notification: a one-time send, one occurrence of a recurring
 * schedule, one trigger firing, one drip step for one subscriber, one feed item.
 * `dedupe_key` is unique, so creating the same run twice is impossible.
 */
export interface NotificationRunsTable {
  id: string;
  notification_id: string;
  site_id: string;
  dedupe_key: string;
  status: RunStatus;
  due_at: Millis;
  segment_id: string | null;
  /** Set for runs aimed at one subscriber (triggered events, drip steps). */
  subscriber_id: string | null;
  fanout_cursor: string | null;
  fanout_done: Flag;
  lease_owner: string | null;
  lease_until: Millis | null;
  started_at: Millis | null;
  finished_at: Millis | null;
  last_error: string | null;
  total_count: ColumnType<number, number | undefined, number>;
  sent_count: ColumnType<number, number | undefined, number>;
  delivered_count: ColumnType<number, number | undefined, number>;
  clicked_count: ColumnType<number, number | undefined, number>;
  failed_count: ColumnType<number, number | undefined, number>;
  created_at: Millis;
}

export type DeliveryStatus = 'pending' | 'sent' | 'failed' | 'gone';

export interface DeliveriesTable {
  id: Generated<number>;
  run_id: string;
  notification_id: string;
  site_id: string;
  subscriber_id: string;
  status: DeliveryStatus;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Millis | null;
  lease_until: Millis | null;
  error: string | null;
  sent_at: Millis | null;
  delivered_at: Millis | null;
  clicked_at: Millis | null;
  created_at: Millis;
}

/** Hourly rollup per site, kept up to date as events happen (dashboard reads only this). */
export interface StatsHourlyTable {
  site_id: string;
  hour_start: Millis;
  sent: ColumnType<number, number | undefined, number>;
  delivered: ColumnType<number, number | undefined, number>;
  clicked: ColumnType<number, number | undefined, number>;
  failed: ColumnType<number, number | undefined, number>;
  subscribed: ColumnType<number, number | undefined, number>;
  unsubscribed: ColumnType<number, number | undefined, number>;
}

export interface UploadsTable {
  id: string;
  user_id: string;
  file_name: string;
  content_type: string;
  byte_size: number;
  width: number;
  height: number;
  created_at: Millis;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  user_tokens: UserTokensTable;
  rate_limits: RateLimitsTable;
  sites: SitesTable;
  subscribers: SubscribersTable;
  subscriber_tags: SubscriberTagsTable;
  notifications: NotificationsTable;
  notification_runs: NotificationRunsTable;
  deliveries: DeliveriesTable;
  stats_hourly: StatsHourlyTable;
  uploads: UploadsTable;
}

export type UserRow = Selectable<UsersTable>;
export type SiteRow = Selectable<SitesTable>;
export type NewSite = Insertable<SitesTable>;
export type SiteUpdate = Updateable<SitesTable>;
export type SubscriberRow = Selectable<SubscribersTable>;
export type NotificationRow = Selectable<NotificationsTable>;
export type RunRow = Selectable<NotificationRunsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;

/** Spec §3 Segment. `rules` is the JSON of contracts `segmentRules` (only the rules that are set). */
export interface SegmentsTable {
  id: string;
  site_id: string;
  name: string;
  /** lower(name): unique per site. */
  name_key: string;
  rules: string;
  created_at: Millis;
  updated_at: Millis;
}

// Declaration merging adds the table to Database above (appended, not edited in).
export interface Database {
  segments: SegmentsTable;
}

export type SegmentRow = Selectable<SegmentsTable>;

// --- Automation (migration 0004): recurring schedules, triggers, site API keys, site events.

export type RecurringIntervalType = 'DAILY' | 'WEEKLY' | 'MONTHLY';

/**
 * The schedule of a RECURRING notification. Occurrence k falls at
 * `start_local` + k × interval as a wall time in `timezone` (pinned when the
 * schedule was set, so a later change of the site's timezone does not move it).
 */
export interface RecurringSchedulesTable {
  id: string;
  notification_id: string;
  site_id: string;
  interval_type: RecurringIntervalType;
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

export interface SiteApiKeysTable {
  id: string;
  site_id: string;
  name: string;
  prefix: string;
  /** sha256 of the key; the key itself is shown once and never stored. */
  key_hash: string;
  created_at: Millis;
  last_used_at: Millis | null;
  revoked_at: Millis | null;
}

export type SiteEventSource = 'browser' | 'api';

export interface SiteEventsTable {
  id: string;
  site_id: string;
  name: string;
  source: SiteEventSource;
  subscriber_id: string | null;
  external_id: string | null;
  /** JSON object sent with the event, or null. */
  data: string | null;
  idempotency_key: string | null;
  dedupe_scope: string | null;
  subscriber_count: number;
  triggered_count: number;
  received_at: Millis;
}

export interface Database {
  recurring_schedules: RecurringSchedulesTable;
  notification_triggers: NotificationTriggersTable;
  site_api_keys: SiteApiKeysTable;
  site_events: SiteEventsTable;
}

export type RecurringScheduleRow = Selectable<RecurringSchedulesTable>;
export type NotificationTriggerRow = Selectable<NotificationTriggersTable>;
export type SiteApiKeyRow = Selectable<SiteApiKeysTable>;
export type SiteEventRow = Selectable<SiteEventsTable>;

// ---------------------------------------------------------------------------
// Welcome campaigns (migration 0005): drip sequences for new subscribers.

export interface WelcomeCampaignsTable {
  id: string;
  site_id: string;
  name: string;
  /** At most one active campaign per site (partial unique index). */
  is_active: Flag;
  icon_url: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  segment_id: string | null;
  /** The version of the steps new subscribers are enrolled with. */
  steps_version: number;
  created_at: Millis;
  updated_at: Millis;
}

/** One step of one version of a campaign: what the owner wrote, and the notification row that is sent. */
export interface WelcomeCampaignStepsTable {
  id: string;
  campaign_id: string;
  version: number;
  sequence_order: number;
  /** Minutes after the previous step (the first step: 0, immediately after subscription). */
  delay_minutes: number;
  notification_id: string;
  title: string;
  message: string;
  destination_url: string;
  icon_url: string | null;
  image_url: string | null;
  /** JSON array of up to two {title, url} action buttons. */
  actions: string | null;
  created_at: Millis;
}

/** A subscriber enrolled in a campaign, with the steps version it follows. */
export interface WelcomeCampaignEnrollmentsTable {
  id: string;
  campaign_id: string;
  site_id: string;
  subscriber_id: string;
  steps_version: number;
  enrolled_at: Millis;
}

export interface Database {
  welcome_campaigns: WelcomeCampaignsTable;
  welcome_campaign_steps: WelcomeCampaignStepsTable;
  welcome_campaign_enrollments: WelcomeCampaignEnrollmentsTable;
}

export type WelcomeCampaignRow = Selectable<WelcomeCampaignsTable>;
export type WelcomeCampaignStepRow = Selectable<WelcomeCampaignStepsTable>;
export type WelcomeCampaignEnrollmentRow = Selectable<WelcomeCampaignEnrollmentsTable>;

/** A feed a site watches for new items (spec §2 RSS Feeds, §3). */
export interface RssFeedsTable {
  id: string;
  site_id: string;
  name: string;
  url: string;
  icon_url: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  show_action_buttons: Flag;
  create_draft: Flag;
  max_pushes_per_day: number;
  segment_id: string | null;
  /** 1: checked on schedule; 0: paused. */
  is_active: Flag;
  /** 0 until a successful check has recorded the items already in the feed (they are never sent). */
  baseline_recorded: ColumnType<Flag, Flag | undefined, Flag>;
  /** Validators of the last successful fetch, for a conditional GET (RFC 9110 §13.1). */
  etag: string | null;
  last_modified: string | null;
  last_fetched_at: Millis | null;
  last_item_guid: string | null;
  last_error: string | null;
  /** Claimed by the scheduler with a conditional update (moved one interval ahead). */
  next_check_at: Millis;
  /** While a check runs, no other check of the same feed starts. */
  poll_lease_until: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

export type RssItemOutcome = 'baseline' | 'sent' | 'draft' | 'skipped';

/** Every item a feed has seen, once: the primary key (feed, item) makes a second send impossible. */
export interface RssFeedItemsTable {
  feed_id: string;
  item_key: string;
  item_id: string;
  link_key: string | null;
  outcome: RssItemOutcome;
  local_day: string;
  notification_id: string | null;
  seen_at: Millis;
}

export type RssFeedRow = Selectable<RssFeedsTable>;
export type RssFeedItemRow = Selectable<RssFeedItemsTable>;


// Declaration merging adds the RSS tables to Database above.
export interface Database {
  rss_feeds: RssFeedsTable;
  rss_feed_items: RssFeedItemsTable;
}
