import { z } from 'zod';
import { envelope } from './common';

// The audit log (docs/product.md, "Teams"): who did what on a site, when and
// from which address. Append-only; kept AUDIT_LOG_RETENTION_DAYS (365) days.

export const AUDIT_ACTIONS = [
  'created',
  'updated',
  'deleted',
  'sent',
  'scheduled',
  'cancelled',
  'toggled',
  'retried',
  'duplicated',
  'key_created',
  'key_revoked',
  'vapid_key_created',
  'vapid_key_made_primary',
  'vapid_key_retired',
  'secret_rotated',
  'settings_changed',
  'member_invited',
  'member_joined',
  'member_removed',
  'member_left',
  'role_changed',
  'ownership_transferred',
  'invitation_revoked',
  'import_run',
  'export_run',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_ACTION_LABELS: Record<AuditAction, string> = {
  created: 'Created',
  updated: 'Updated',
  deleted: 'Deleted',
  sent: 'Sent',
  scheduled: 'Scheduled',
  cancelled: 'Cancelled',
  toggled: 'Turned on or off',
  retried: 'Retried',
  duplicated: 'Duplicated',
  key_created: 'API key created',
  key_revoked: 'API key revoked',
  vapid_key_created: 'VAPID key imported',
  vapid_key_made_primary: 'VAPID key made primary',
  vapid_key_retired: 'VAPID key retired',
  secret_rotated: 'Secret rotated',
  settings_changed: 'Settings changed',
  member_invited: 'Member invited',
  member_joined: 'Member joined',
  member_removed: 'Member removed',
  member_left: 'Member left',
  role_changed: 'Role changed',
  ownership_transferred: 'Ownership transferred',
  invitation_revoked: 'Invitation revoked',
  import_run: 'Import run',
  export_run: 'Export run',
};

export const AUDIT_SUBJECT_TYPES = ['site', 'notification', 'welcome_campaign', 'segment', 'rss_feed', 'subscriber', 'api_key', 'vapid_key', 'member', 'invitation', 'audit_log', 'webhook'] as const;
export type AuditSubjectType = (typeof AUDIT_SUBJECT_TYPES)[number];

export const auditEntry = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.object({ type: z.enum(['user', 'api_key']), id: z.string(), label: z.string() }),
  action: z.enum(AUDIT_ACTIONS),
  subject: z.object({ type: z.enum(AUDIT_SUBJECT_TYPES), id: z.string().nullable(), label: z.string().nullable() }),
  changed_fields: z.array(z.string()),
  detail: z.record(z.string(), z.unknown()),
  address: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof auditEntry>;

const dateBound = z
  .string()
  .max(40)
  .refine((value) => !Number.isNaN(Date.parse(value)), 'Must be a date such as 2026-12-01 or 2026-12-01T09:00:00Z');

export const auditLogQuery = z
  .object({
    /** A user id or an API key id, or an email address of a member. */
    actor: z.string().trim().min(1).max(254).optional(),
    action: z.enum(AUDIT_ACTIONS, { message: 'Unknown action' }).optional(),
    from: dateBound.optional(),
    to: dateBound.optional(),
    cursor: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .strict();
export type AuditLogQuery = z.input<typeof auditLogQuery>;

export const auditLogResponse = envelope(z.object({ entries: z.array(auditEntry), next_cursor: z.string().nullable() }));
export type AuditLogPage = z.infer<typeof auditLogResponse>['data'];
