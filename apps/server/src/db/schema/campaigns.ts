// Automation that creates notifications: welcome drip campaigns and RSS feeds.
import type { ColumnType } from 'kysely';
import type { Flag, Millis } from './columns';

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
