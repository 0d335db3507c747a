// Accounts: users, their sessions and emailed tokens, login rate limits, uploads.
import type { Millis } from './columns';

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
  /**
   * The address a reset or verification link was mailed to: the link works
   * only while the account still has it. Null for setup links (and for links
   * issued before this column existed, which are therefore refused).
   */
  email: string | null;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

/** A fingerprint of a server secret some process used (migration 0013); never the secret itself. */
export interface SecretFingerprintsTable {
  fingerprint: string;
  first_seen_at: Millis;
  last_seen_at: Millis;
}

export interface RateLimitsTable {
  key: string;
  window_start: Millis;
  hits: number;
  /** When the current window ends; the scheduled purge deletes rows past it. */
  expires_at: Millis;
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

