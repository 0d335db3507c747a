// The audience: subscribers, their tags, segments, and the events they cause.
import type { SiteEventSource } from '@herald/contracts';
import type { ColumnType, Generated } from 'kysely';
import type { DefaultedFlag, Flag, Millis } from './columns';

/**
 * SQLite only (migration 0036): the last number given to a row of a numbered
 * table (`name` 'subscribers'), never lowered; PostgreSQL uses sequences.
 */
export interface SeqCountersTable {
  name: string;
  last: number;
}

export interface SubscribersTable {
  id: string;
  /** A number for this subscriber, never given twice (migration 0036): what its delivery rows name it by. */
  seq: Generated<number>;
  site_id: string;
  endpoint: string;
  /** sha256 of the endpoint: endpoints are long, the unique index stays small. */
  endpoint_hash: string;
  p256dh: string;
  auth: string;
  /** The site VAPID key the browser subscribed with (site_vapid_keys); pushes are signed with it. Null only for rows written before it was known: the site's primary key. */
  vapid_key_id: ColumnType<string | null, string | null | undefined, string | null>;
  browser: string | null;
  os: string | null;
  country: string | null;
  language: string | null;
  timezone: string | null;
  user_agent: string | null;
  external_id: string | null;
  /** 1 when external_id was claimed with a valid identity hash; only such claims count on a site that verifies identities. */
  external_id_verified: DefaultedFlag;
  is_active: Flag;
  /** 1: one of the owner's own browsers; test sends reach only these (issue 12). */
  test_device: DefaultedFlag;
  /** What the owner calls it ("Firefox on Linux" unless renamed); null unless a test device. */
  test_device_name: ColumnType<string | null, string | null | undefined, string | null>;
  subscribed_at: Millis;
  last_seen_at: Millis | null;
  /** The latest delivered beacon of a push to it (stale subscribers have none for 90+ days). */
  last_delivered_at: Millis | null;
  /** The latest accepted push among its delivery rows compaction removed (migration 0027): live rows may hold a later one. */
  last_sent_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** The latest click among its delivery rows compaction removed (migration 0027): live rows may hold a later one. */
  last_clicked_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  unsubscribed_at: Millis | null;
  updated_at: Millis;
}

export interface SubscriberTagsTable {
  subscriber_id: string;
  site_id: string;
  tag: string;
}

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
