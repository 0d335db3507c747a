import { decodeBase64Url } from '../common/base64url';
import { configFromQuery, isHttpUrl, type HeraldConfig } from '../common/config';
import { sendEvent } from '../common/http';
import { postSubscription, subscribedWithKey } from '../common/post-subscription';
import { readConfig, readSubscriber } from '../common/store';

/** The decrypted push payload Herald's delivery engine sends. */
export interface PushPayload {
  title: string;
  body: string;
  url?: string;
  icon?: string;
  image?: string;
  tag?: string;
  token?: string;
  api?: string;
  actions: { action: string; title: string; url?: string }[];
  /** Stay on screen until the visitor acts on it. */
  requireInteraction: boolean;
  /** Alert again when replacing a notification with the same tag. */
  renotify: boolean;
}

/** Kept on the notification (`notification.data`) for the click. `herald` marks notifications this code showed. */
export interface HeraldNotificationData {
  herald: 1;
  url?: string;
  token?: string;
  api?: string;
  /** action id → URL for the notification's buttons */
  actionUrls?: Record<string, string>;
}

/** Fields the TypeScript DOM library leaves out of NotificationOptions but browsers support. */
interface RichNotificationOptions extends NotificationOptions {
  image?: string;
  renotify?: boolean;
  actions?: { action: string; title: string }[];
}

/** Push API §pushsubscriptionchange; not in TypeScript's WebWorker library. */
interface PushSubscriptionChangeEvent extends ExtendableEvent {
  readonly oldSubscription: PushSubscription | null;
  readonly newSubscription: PushSubscription | null;
}

function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Null for anything that is not a Herald payload: a malformed push must not break the worker. */
export function parsePayload(data: PushMessageData | null): PushPayload | null {
  if (!data) return null;
  let raw: unknown;
  try {
    raw = data.json();
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const fields = raw as Record<string, unknown>;
  const title = optionalText(fields.title);
  if (!title) return null;
  const actions = Array.isArray(fields.actions) ? fields.actions : [];
  return {
    title,
    body: typeof fields.body === 'string' ? fields.body : '',
    url: optionalText(fields.url),
    icon: optionalText(fields.icon),
    image: optionalText(fields.image),
    tag: optionalText(fields.tag),
    token: optionalText(fields.token),
    api: optionalText(fields.api),
    actions: actions.flatMap((entry: unknown) => {
      if (typeof entry !== 'object' || entry === null) return [];
      const action = optionalText((entry as Record<string, unknown>).action);
      const title = optionalText((entry as Record<string, unknown>).title);
      return action && title ? [{ action, title, url: optionalText((entry as Record<string, unknown>).url) }] : [];
    }),
    requireInteraction: fields.requireInteraction === true,
    renotify: fields.renotify === true,
  };
}

/**
 * What a push is to Herald: its own notification, one of its own it cannot
 * read (a Herald payload without a title, or no JSON at all), or a payload of
 * the site's own (JSON without Herald's fields).
 */
export type ClassifiedPush = { kind: 'herald'; payload: PushPayload; ours: boolean } | { kind: 'unreadable'; ours: boolean };

/** Herald's pushes carry a beacon token, its API address or a `herald-` tag; a site's own `{title, body}` carries none (README). */
function carriesHeraldFields(fields: Record<string, unknown>): boolean {
  return typeof fields.token === 'string' || typeof fields.api === 'string' || (typeof fields.tag === 'string' && fields.tag.startsWith('herald-'));
}

export function classifyPush(data: PushMessageData | null): ClassifiedPush {
  const payload = parsePayload(data);
  if (payload) return { kind: 'herald', payload, ours: carriesHeraldFields(payload as unknown as Record<string, unknown>) };
  let raw: unknown;
  try {
    raw = data?.json();
  } catch {
    return { kind: 'unreadable', ours: false };
  }
  const fields = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  return { kind: 'unreadable', ours: carriesHeraldFields(fields) };
}

function isHeraldData(value: unknown): value is HeraldNotificationData {
  return typeof value === 'object' && value !== null && (value as { herald?: unknown }).herald === 1;
}

/** An absolute http(s) URL, or null: a notification must never open `javascript:` or similar. */
function safeHttpUrl(url: string | undefined, base: string): string | null {
  if (!url) return null;
  try {
    const resolved = new URL(url, base).href;
    return isHttpUrl(resolved) ? resolved : null;
  } catch {
    return null;
  }
}

export function installHeraldWorker(scope: ServiceWorkerGlobalScope): void {
  // A site may import Herald's worker twice (its own worker plus the root file); handle each event once.
  const marked = scope as ServiceWorkerGlobalScope & { heraldInstalled?: true };
  if (marked.heraldInstalled) return;
  marked.heraldInstalled = true;

  const queryConfig = configFromQuery(scope.location.search);
  // The worker's URL names the key of the snippet it was registered from; the page stores the site's primary key
  // as of its last view (page/herald.ts, movedToPrimaryKey), which wins after a key rotation.
  const loadConfig = async (): Promise<HeraldConfig | undefined> => {
    const stored = await readConfig();
    if (!queryConfig) return stored;
    return stored && stored.siteId === queryConfig.siteId ? { ...queryConfig, vapidKey: stored.vapidKey } : queryConfig;
  };

  if (queryConfig) {
    // Herald's query on the top-level script means this worker is Herald's
    // alone (/herald-sw.js?site=…), so a new version may take over at once.
    // Imported into a site's own worker, the site decides its own lifecycle.
    scope.addEventListener('install', () => {
      void scope.skipWaiting();
    });
    scope.addEventListener('activate', (event) => event.waitUntil(scope.clients.claim()));
  }

  scope.addEventListener('push', (event) => {
    const push = classifyPush(event.data);
    // Imported into a site's own worker, a push without Herald's fields is the site's to show.
    if (push.kind === 'herald' && (queryConfig || push.ours)) {
      event.waitUntil(showPush(scope, push.payload, loadConfig));
      return;
    }
    if (push.kind === 'herald') return;
    // Every push must show a notification: Safari revokes the subscription of
    // a worker that receives pushes silently (userVisibleOnly). Herald's own
    // worker shows a plain one for anything it cannot read; imported into a
    // site's own worker, it leaves pushes that are not Herald's to the site.
    if (queryConfig || push.ours) event.waitUntil(showFallback(scope));
  });

  scope.addEventListener('notificationclick', (event) => {
    const data: unknown = event.notification.data;
    if (!isHeraldData(data)) return;
    event.notification.close();
    const chosen = event.action ? data.actionUrls?.[event.action] : undefined;
    const url = safeHttpUrl(chosen ?? data.url, scope.location.href);
    event.waitUntil(
      Promise.all([
        url ? openOrFocus(scope, url) : undefined,
        data.token && data.api ? sendEvent(data.api, 'clicked', data.token) : undefined,
      ]),
    );
  });

  scope.addEventListener('pushsubscriptionchange', (event) => {
    event.waitUntil(resubscribe(scope, event as PushSubscriptionChangeEvent, loadConfig));
  });
}

/** The notification for a push whose content cannot be read: the site's name, and a click opens the site. */
export const FALLBACK_TAG = 'herald-fallback';

async function showFallback(scope: ServiceWorkerGlobalScope, title = scope.location.hostname, body = 'You have a new notification. Open the site to see it.'): Promise<void> {
  const data: HeraldNotificationData = { herald: 1, url: `${scope.location.origin}/` };
  try {
    await scope.registration.showNotification(title, { body, tag: FALLBACK_TAG, data });
  } catch (error) {
    console.warn('Herald: could not show a notification', error);
  }
}

async function showPush(scope: ServiceWorkerGlobalScope, payload: PushPayload, loadConfig: () => Promise<HeraldConfig | undefined>): Promise<void> {
  const api = payload.api ?? (await loadConfig())?.api;
  const data: HeraldNotificationData = { herald: 1, url: payload.url, token: payload.token, api };
  const options: RichNotificationOptions = { body: payload.body, data };
  if (payload.tag) options.tag = payload.tag;
  if (payload.icon) options.icon = payload.icon;
  if (payload.image) options.image = payload.image;
  if (payload.requireInteraction) options.requireInteraction = true;
  // renotify needs a tag (the browser throws otherwise).
  if (payload.renotify && payload.tag) options.renotify = true;
  if (payload.actions.length > 0) {
    options.actions = payload.actions.map(({ action, title }) => ({ action, title }));
    data.actionUrls = Object.fromEntries(payload.actions.flatMap(({ action, url }) => (url ? [[action, url]] : [])));
  }
  // Shown before the beacon: "delivered" means the visitor got it (RFC 8030's
  // 201 only means the push service accepted it).
  try {
    await scope.registration.showNotification(payload.title, options);
  } catch (error) {
    // A browser may refuse an option (an image, actions): the visitor still gets the text, and its click still
    // opens the notification's page and counts.
    console.warn('Herald: showing the notification failed, showing it plainly', error);
    try {
      await scope.registration.showNotification(payload.title, { body: payload.body, ...(payload.tag ? { tag: payload.tag } : {}), data: { herald: 1, url: data.url, token: data.token, api: data.api } });
    } catch {
      await showFallback(scope, payload.title, payload.body);
      return;
    }
  }
  if (payload.token && api) await sendEvent(api, 'delivered', payload.token);
}

async function openOrFocus(scope: ServiceWorkerGlobalScope, url: string): Promise<void> {
  try {
    const windows = await scope.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const existing = windows.find((client) => client.url === url);
    if (existing) {
      await existing.focus();
      return;
    }
    await scope.clients.openWindow(url);
  } catch (error) {
    // The click beacon still goes out; the browser may refuse a window (e.g. no user activation left).
    console.warn('Herald: could not open the notification URL', error);
  }
}

/**
 * The push service replaced or expired the subscription (Push API
 * §pushsubscriptionchange): subscribe again with the same key and tell Herald,
 * naming the old endpoint so the subscriber keeps its history.
 */
async function resubscribe(
  scope: ServiceWorkerGlobalScope,
  event: PushSubscriptionChangeEvent,
  loadConfig: () => Promise<HeraldConfig | undefined>,
): Promise<void> {
  try {
    const config = await loadConfig();
    // The site's primary key as of the last page view wins: after a rotation
    // the old key may be retired, and Herald refuses subscriptions made with
    // a retired key (docs/product.md, "VAPID keys"). Without a configuration,
    // the old subscription's key keeps the browser subscribed until a page view.
    const primaryKey = config ? decodeBase64Url(config.vapidKey) : null;
    const key = primaryKey ?? event.oldSubscription?.options?.applicationServerKey ?? null;
    if (!key) return;
    let subscription = event.newSubscription;
    if (subscription && primaryKey && !subscribedWithKey(subscription, primaryKey)) {
      // The browser renewed it with the old key: move it to the primary one.
      await subscription.unsubscribe();
      subscription = null;
    }
    subscription ??= await scope.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    // Without a configuration the page posts it on the next visit (see page/herald.ts refresh).
    if (!config) return;
    const stored = await readSubscriber(config.siteId);
    await postSubscription(config, subscription, event.oldSubscription?.endpoint ?? stored?.endpoint);
  } catch (error) {
    console.warn('Herald: could not renew the push subscription', error);
  }
}
