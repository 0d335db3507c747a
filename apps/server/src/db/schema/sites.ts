// Sites, and the API keys a site's backend uses for server-to-server events.
import type { Counter, Millis } from './columns';

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
