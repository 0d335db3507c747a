// Teams: site members and their roles, invitations, the audit log.
import type { AuditAction, AuditSubjectType, SiteRole } from '@herald/contracts';
import type { Millis } from './columns';

export interface SiteMembersTable {
  site_id: string;
  user_id: string;
  role: SiteRole;
  created_at: Millis;
  updated_at: Millis;
}

export interface SiteInvitationsTable {
  id: string;
  site_id: string;
  /** Lowercased; only an account with this address can accept. */
  email: string;
  role: SiteRole;
  /** sha256 of the emailed token, shared by the rows one mail invites to. */
  token_hash: string;
  invited_by: string | null;
  created_at: Millis;
  expires_at: Millis;
  accepted_at: Millis | null;
  accepted_by: string | null;
  revoked_at: Millis | null;
}

export interface AuditLogTable {
  id: string;
  /** The site it is about; no foreign key (migration 0015): the entry outlives a deleted site until the retention sweep. */
  site_id: string;
  created_at: Millis;
  actor_type: 'user' | 'api_key';
  actor_id: string;
  /** The user's name and email, or the key's name, as they were at the time. */
  actor_label: string;
  action: AuditAction;
  subject_type: AuditSubjectType;
  subject_id: string | null;
  subject_label: string | null;
  /** JSON list of the field names an update changed. */
  changed_fields: string;
  /** JSON object: the few facts an action needs (old and new role, audience of a send). */
  detail: string;
  address: string | null;
}
