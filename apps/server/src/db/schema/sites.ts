// Sites, and the API keys a site's backend uses for server-to-server events.
import type { Counter, DefaultedFlag, DefaultedJson, Millis } from './columns';

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
  /** Key of the identity HMAC (docs/security.md); null until first needed for a site created before it existed. */
  identity_secret: string | null;
  /** 1: `identify` needs a valid identity_hash. New sites start at 1; sites older than the feature at 0. */
  identity_verification: DefaultedFlag;
  /** JSON array of tags only the site's backend may set (the browser SDK is refused). */
  server_only_tags: DefaultedJson;
  active_subscriber_count: Counter;
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
