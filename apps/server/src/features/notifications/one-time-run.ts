// The single run of a ONE_TIME notification (spec §2): created when it is
// scheduled or sent now, named by a dedupe key so it exists at most once.
import crypto from 'node:crypto';
import type { NotificationRow } from '../../db/schema';
import { insertRun } from '../../delivery/runs';
import { conflict } from '../../platform/errors';

/** The dedupe key of a one-time notification's single run. */
export const oneTimeRunKey = (notificationId: string) => `once:${notificationId}`;

export async function createOneTimeRun(db: Parameters<typeof insertRun>[0], notification: Pick<NotificationRow, 'id' | 'site_id' | 'segment_id'>, dueAt: number, now: number): Promise<void> {
  const created = await insertRun(db, {
    id: crypto.randomUUID(),
    notification_id: notification.id,
    site_id: notification.site_id,
    dedupe_key: oneTimeRunKey(notification.id),
    due_at: dueAt,
    segment_id: notification.segment_id,
    subscriber_id: null,
    created_at: now,
  });
  if (!created) throw conflict('This notification has already been sent');
}
