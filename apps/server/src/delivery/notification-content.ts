import type { NotificationRow, SiteRow } from '../db/schema';
import type { NotificationContent } from './payload';
import { pushTopic } from './topic';
import type { VapidCredentials } from './vapid';
import { vapidSubject } from './vapid';

/** How long a push service may hold a message for an offline browser: a day-old notification is news no more. */
export const NOTIFICATION_TTL_SECONDS = 24 * 60 * 60;

/** What every subscriber of one notification receives (only the delivery token differs). */
export function notificationContent(notification: NotificationRow, site: SiteRow): NotificationContent {
  const actions = notification.actions ? (JSON.parse(notification.actions) as Array<{ title: string; url: string }>) : [];
  return {
    collapseKey: notification.id,
    title: notification.title,
    body: notification.message,
    url: notification.destination_url,
    icon: notification.icon_url ?? site.icon,
    image: notification.image_url,
    actions: actions.map((a, i) => ({ action: `action-${i + 1}`, title: a.title, url: a.url })),
  };
}

/** The Topic that lets a push service collapse an accidental re-send of the same notification (docs/web-push.md). */
export function notificationTopic(notification: Pick<NotificationRow, 'id'>): string {
  return pushTopic(notification.id);
}

/** The site's signing credentials; `sub` is VAPID_SUBJECT, else the site's https origin, else the owner's email (see vapidSubject). */
export function siteVapidCredentials(site: SiteRow, ownerEmail: string | undefined, configuredSubject: string | undefined): VapidCredentials {
  return { publicKey: site.vapid_public_key, privateKey: site.vapid_private_key, subject: vapidSubject(site.url, ownerEmail, configuredSubject) };
}
