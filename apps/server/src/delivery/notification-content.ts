import type { NotificationRow, SiteRow } from '../db/schema';
import type { NotificationContent } from './payload';
import { pushTopic } from './topic';
import type { VapidCredentials } from './vapid';
import { vapidSubject } from './vapid';

/** What every subscriber of one notification receives (only the delivery token differs). */
export function notificationContent(notification: NotificationRow, site: SiteRow): NotificationContent {
  const actions = notification.actions ? (JSON.parse(notification.actions) as Array<{ title: string; url: string }>) : [];
  return {
    collapseKey: collapseKeyOf(notification),
    title: notification.title,
    body: notification.message,
    url: notification.destination_url,
    icon: notification.icon_url ?? site.icon,
    image: notification.image_url,
    actions: actions.map((a, i) => ({ action: `action-${i + 1}`, title: a.title, url: a.url })),
    requireInteraction: notification.require_interaction === 1,
    // A notification that replaces an earlier one on screen alerts again (otherwise the browser swaps it in silently).
    renotify: notification.topic !== null,
  };
}

/**
 * What identifies "the same notification" to the push service (Topic) and the
 * browser (tag): the notification itself, or, when the owner named a topic,
 * that topic within the site, so each send of it replaces the one before
 * (docs/web-push.md, "TTL, Urgency and Topic").
 */
function collapseKeyOf(notification: Pick<NotificationRow, 'id' | 'site_id' | 'topic'>): string {
  return notification.topic === null ? notification.id : `topic:${notification.site_id}:${notification.topic}`;
}

/** The Topic that lets a push service collapse an accidental re-send of the same notification (docs/web-push.md). */
export function notificationTopic(notification: Pick<NotificationRow, 'id' | 'site_id' | 'topic'>): string {
  return pushTopic(collapseKeyOf(notification));
}

/** The site's signing credentials (its primary key); `sub` is VAPID_SUBJECT, else the site's https origin, else the owner's email (see vapidSubject). */
export function siteVapidCredentials(site: SiteRow, ownerEmail: string | undefined, configuredSubject: string | undefined): VapidCredentials {
  return { publicKey: site.vapid_public_key, privateKey: site.vapid_private_key, subject: vapidSubject(site.url, ownerEmail, configuredSubject) };
}

/** A subscriber's key pair, as stored beside it; null fields: a row written before keys were recorded, signed with the site's primary key. */
export interface SubscriberVapidKey {
  vapid_key_id: string | null;
  vapid_public_key: string | null;
  vapid_private_key: string | null;
}

/**
 * Per subscriber, the credentials of the key it subscribed with (docs/web-push.md:
 * a subscription only accepts pushes signed with its own key). One object per
 * key, so a fan-out's messages share them and the token cache signs once per
 * (push-service origin, key).
 */
export function subscriberVapidCredentials(site: VapidCredentials): (subscriber: SubscriberVapidKey) => VapidCredentials {
  const byKey = new Map<string, VapidCredentials>();
  return (subscriber) => {
    if (!subscriber.vapid_key_id || !subscriber.vapid_public_key || !subscriber.vapid_private_key) return site;
    let credentials = byKey.get(subscriber.vapid_key_id);
    if (!credentials) {
      credentials = { publicKey: subscriber.vapid_public_key, privateKey: subscriber.vapid_private_key, subject: site.subject };
      byKey.set(subscriber.vapid_key_id, credentials);
    }
    return credentials;
  };
}
