// Sites, and the API keys a site's backend uses for server-to-server events.
import type { ColumnType } from 'kysely';
import type { Counter, DefaultedFlag, DefaultedJson, Flag, Millis } from './columns';

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
  /** The primary VAPID key pair (site_vapid_keys.is_primary), kept here in step with it. */
  vapid_public_key: string;
  vapid_private_key: string;
  /** Key of the identity HMAC (docs/security.md); null until first needed for a site created before it existed. */
  identity_secret: string | null;
  /** 1: `identify` needs a valid identity_hash. New sites start at 1; sites older than the feature at 0. */
  identity_verification: DefaultedFlag;
  /** JSON array of tags only the site's backend may set (the browser SDK is refused). */
  server_only_tags: DefaultedJson;
  /** At most this many pushes per subscriber in any `frequency_cap_hours` (both null: no cap). docs/product.md, "Frequency cap". */
  frequency_cap_max: ColumnType<number | null, number | null | undefined, number | null>;
  frequency_cap_hours: ColumnType<number | null, number | null | undefined, number | null>;
  /** Quiet hours, "HH:MM" in each subscriber's zone (both null: none). docs/product.md, "Quiet hours". */
  quiet_hours_start: ColumnType<string | null, string | null | undefined, string | null>;
  quiet_hours_end: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1: the SDK subscribes a browser whose notification permission is already granted, without a prompt (on by default, migration 0021). */
  resubscribe_granted: DefaultedFlag;
  /** 1: the SDK replaces another provider's subscription (another key on the same registration) with Herald's; 0 by default. */
  replace_foreign_subscription: DefaultedFlag;
  active_subscriber_count: Counter;
  /** JSON of contracts `promptSettings` (the opt-in prompt the SDK shows); null: the defaults. */
  prompt_settings: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON of the last install check (contracts `installCheckResult`); null: never checked. */
  install_check: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the owner hid the setup checklist; null: shown while the site is new. */
  checklist_dismissed_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** When the owner last sent a test push that a test device accepted. */
  test_sent_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  created_at: Millis;
  updated_at: Millis;
}

/** A one-time "make this browser a test device" link; only the code's hash is kept. */
export interface TestDeviceLinksTable {
  code_hash: string;
  site_id: string;
  created_by: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
  subscriber_id: string | null;
}

/** Per site, hour and prompt type: prompts shown and the subscriptions they led to (reported by the SDK). */
export interface PromptStatsTable {
  site_id: string;
  hour_start: Millis;
  prompt: string;
  shown: Counter;
  subscribed: Counter;
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

/** A VAPID key pair of a site (docs/web-push.md); subscribers.vapid_key_id names the one a browser subscribed with. */
export interface SiteVapidKeysTable {
  id: string;
  site_id: string;
  /** base64url, the 65-byte uncompressed P-256 point (the browser's applicationServerKey). */
  public_key: string;
  /** base64url, the 32-byte private scalar; stored as sites.vapid_private_key is (docs/security.md). */
  private_key: string;
  /** 1 for exactly one key per site: the one new subscriptions use and the snippet carries. */
  is_primary: Flag;
  created_at: Millis;
  retired_at: Millis | null;
}
