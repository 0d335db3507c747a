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
  rss_feeds: RssFeedsTable;
  rss_feed_items: RssFeedItemsTable;
}

export type UserRow = Selectable<UsersTable>;
export type SiteRow = Selectable<SitesTable>;
export type NewSite = Insertable<SitesTable>;
export type SiteUpdate = Updateable<SitesTable>;
export type SubscriberRow = Selectable<SubscribersTable>;
export type NotificationRow = Selectable<NotificationsTable>;
export type RunRow = Selectable<NotificationRunsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;

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
