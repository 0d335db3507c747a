// What every notification action starts from: the caller's access to the
// notification (404 for a non-member, 403 naming the role for less) and the
// audit entry that records the action (docs/security.md, "Audit log").
import type { SiteRole } from '@herald/contracts';
import type { Kysely } from 'kysely';
import type { Database, NotificationRow } from '../../db/schema';
import { conflict } from '../../platform/errors';
import { checkSiteRole } from '../../platform/site-roles';
import type { AuditRecord } from '../audit-log/record';
import * as repo from './repository';

/** The notification if the user's role on its site is at least `needed`. */
export async function ownedNotification(db: Kysely<Database>, userId: string, id: string, needed: SiteRole): Promise<NotificationRow> {
  return checkSiteRole(await repo.findNotificationOfUser(db, userId, id), needed, 'Notification');
}

/** A notification the dashboard may change (editor or higher). A welcome-campaign step belongs to its campaign (edited there, versioned). */
export async function changeableNotification(db: Kysely<Database>, userId: string, id: string): Promise<NotificationRow> {
  const row = await ownedNotification(db, userId, id, 'editor');
  if (row.source === 'campaign') throw conflict('This notification is a welcome campaign step: change it from its campaign');
  return row;
}

/** An audit entry about a notification. */
export function audited(userId: string, row: Pick<NotificationRow, 'id' | 'site_id' | 'title'>, action: AuditRecord['action'], extra: Partial<AuditRecord> = {}): AuditRecord {
  return {
    siteId: row.site_id,
    actor: { userId },
    action,
    subject: { type: 'notification', id: row.id, label: row.title },
    ...extra,
  };
}
