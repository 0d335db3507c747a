import { decodeBase64Url, encodeBase64Url } from '../common/base64url';
import { siteEndpoint } from '../common/config';
import { HeraldError } from '../common/errors';
import { postJson } from '../common/http';
import { postSubscription, subscribedWithKey } from '../common/post-subscription';
import { readOptedOut, readSubscriber, writeConfig, writeOptedOut, writeSubscriber, type SubscriberRecord } from '../common/store';
import type { PageSettings } from './script-settings';
import { pushSupported, registerWorker, rootRegistration } from './service-worker';

export type HeraldPermission = NotificationPermission | 'unsupported';

export interface TrackOptions {
  /** Herald ignores a second event with the same key, so a retried call fires its notification once. */
  idempotencyKey?: string;
}

/** `window.herald` (documented in packages/sdk/README.md). */
export interface HeraldApi {
  /** Asks permission (call it from a click), subscribes this browser and registers it with Herald. */
  subscribe(): Promise<{ id: string }>;
  /** Removes this browser's subscription; resolves true when there was one. */
  unsubscribe(): Promise<boolean>;
  isSubscribed(): Promise<boolean>;
  permission(): HeraldPermission;
  track(event: string, data?: Record<string, unknown>, options?: TrackOptions): Promise<void>;
  /**
   * `identityHash`: HMAC-SHA256(site identity secret, externalId) as lowercase
   * hex, computed by the site's backend; required when the site verifies identities.
   */
  identify(externalId: string, identityHash?: string): Promise<void>;
  addTags(tags: string[]): Promise<void>;
  removeTags(tags: string[]): Promise<void>;
}

/** What Herald calls a browser made a test device from a test-device link. */
export interface TestDeviceInfo {
  subscriber_id: string;
  name: string;
  browser: string;
  os: string;
}

export interface HeraldEvents {
  'herald:ready': HeraldApi;
  /** Fired once Herald has accepted the subscription (never for one it refused). */
  'herald:subscribed': { id: string };
  'herald:unsubscribed': undefined;
  'herald:error': { error: Error };
  /** This browser became a test device (test-device link). */
  'herald:test-device': { device: TestDeviceInfo };
}

/** The opt-in prompts Herald shows (Settings → Installation); reported with the subscription they led to. */
export type PromptType = 'slide' | 'native' | 'bell';

export function emit<K extends keyof HeraldEvents>(type: K, detail: HeraldEvents[K]): void {
  window.dispatchEvent(new CustomEvent(type, { detail }));
}

/** Background failures (page-load refresh, the soft prompt) have no caller to reject to. */
export function reportError(error: unknown): void {
  const reported = error instanceof Error ? error : new Error(String(error));
  console.warn(`Herald: ${reported.message}`);
  emit('herald:error', { error: reported });
}

/** A day between refreshes keeps Herald's "last seen" true without a request on every page view. */
export const REFRESH_INTERVAL_MS = 24 * 60 * 60 * 1000;

/**
 * When Herald refuses or cannot be reached after the browser subscribed, the
 * subscription is posted again after these waits (and on the next page load),
 * instead of the page pretending it is subscribed.
 */
export const POST_RETRY_DELAYS_MS = [30_000, 120_000, 600_000] as const;

function unsupported(): HeraldError {
  return new HeraldError('unsupported', 'Push notifications are not supported in this browser.');
}

function currentPermission(): HeraldPermission {
  return pushSupported() ? Notification.permission : 'unsupported';
}

function requireText(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new HeraldError('invalid-argument', `${name} must be a non-empty string.`);
  }
  return value;
}

function requireTags(tags: unknown): string[] {
  if (!Array.isArray(tags) || tags.length === 0) throw new HeraldError('invalid-argument', 'tags must be a non-empty array of strings.');
  return tags.map((tag) => requireText(tag, 'Each tag'));
}

export interface HeraldInstance {
  herald: HeraldApi;
  /** Settles when the page-load refresh has finished (it never rejects; failures go to `herald:error`). */
  refreshed: Promise<void>;
  /** subscribe(), naming the opt-in prompt the visitor accepted (counted in its conversion). Call it inside the click. */
  subscribeFrom(prompt: PromptType | undefined): Promise<{ id: string }>;
  /** Makes this subscribed browser a test device with a test-device link's code. */
  claimTestDevice(code: string): Promise<TestDeviceInfo>;
}

/** A 65-byte uncompressed P-256 point in base64url, as Herald answers the site's primary key; anything else is ignored. */
function readVapidKey(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{87}$/.test(value)) return undefined;
  const bytes = decodeBase64Url(value);
  return bytes.length === 65 && bytes[0] === 4 ? value : undefined;
}

/**
 * What Herald tells the SDK about the site (GET
 * /api/public/sites/{siteId}/prompt-settings): the primary VAPID key
 * (`vapid_public_key`; after the owner rotates keys it differs from the
 * snippet's data-vapid-key), and what to do for a visitor who already allowed
 * notifications (docs/product.md, Settings, "visitors who already allowed
 * notifications"). Undefined when Herald cannot be reached or answers
 * something else; a setting Herald does not name is off.
 */
interface SiteSdkSettings {
  primaryKey: string | undefined;
  resubscribeGranted: boolean;
  replaceForeignSubscription: boolean;
}

async function fetchSiteSettings(settings: PageSettings): Promise<SiteSdkSettings | undefined> {
  try {
    const response = await fetch(siteEndpoint(settings, 'prompt-settings'), {
      method: 'GET',
      mode: 'cors',
      credentials: 'omit',
      signal: typeof AbortSignal.timeout === 'function' ? AbortSignal.timeout(5000) : undefined,
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { data?: { vapid_public_key?: unknown; resubscribe_granted?: unknown; replace_foreign_subscription?: unknown } };
    return {
      primaryKey: readVapidKey(body.data?.vapid_public_key),
      resubscribeGranted: body.data?.resubscribe_granted === true,
      replaceForeignSubscription: body.data?.replace_foreign_subscription === true,
    };
  } catch {
    return undefined;
  }
}

async function fetchPrimaryKey(settings: PageSettings): Promise<string | undefined> {
  return (await fetchSiteSettings(settings))?.primaryKey;
}

/** Push API §subscribe: a registration holds one subscription, bound to one key; another key is refused with InvalidStateError. */
function isInvalidState(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'InvalidStateError';
}

export const FOREIGN_SUBSCRIPTION_WARNING =
  'Herald: this browser already has a push subscription made with another key (another provider’s) on the service worker of this site; it is left as it is because “Replace another provider’s subscription” is off in the site’s settings.';

export function createHerald(settings: PageSettings): HeraldInstance {
  /** The key this page subscribes with: the snippet's, until Herald names another primary key (rotation). */
  let vapidKey = decodeBase64Url(settings.vapidKey);
  let pageSettings: PageSettings = settings;
  let subscribing: Promise<{ id: string }> | undefined;
  /** The endpoint Herald last accepted from this page (also kept in IndexedDB, which may be unavailable). */
  let acceptedEndpoint: string | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let retries = 0;

  /** This site's live subscription in this browser, if it was made with the site's key. */
  async function currentSubscription(): Promise<PushSubscription | null> {
    if (!pushSupported() || Notification.permission !== 'granted') return null;
    const registration = await rootRegistration();
    const subscription = registration ? await registration.pushManager.getSubscription() : null;
    return subscription && subscribedWithKey(subscription, vapidKey) ? subscription : null;
  }

  async function post(subscription: PushSubscription, previousEndpoint: string | undefined, prompt?: PromptType): Promise<SubscriberRecord> {
    const record = await postSubscription(settings, subscription, previousEndpoint, prompt);
    acceptedEndpoint = record.endpoint;
    retries = 0;
    return record;
  }

  /**
   * Herald refused or could not be reached after the browser subscribed: the
   * browser keeps its subscription and it is posted again a little later
   * (`herald:subscribed` fires then), a few times, then on the next page load.
   */
  function retryLater(prompt: PromptType | undefined): void {
    if (retryTimer !== undefined || retries >= POST_RETRY_DELAYS_MS.length) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      retries += 1;
      void (async () => {
        const subscription = await currentSubscription();
        if (!subscription || subscription.endpoint === acceptedEndpoint) return;
        const stored = await readSubscriber(settings.siteId);
        const record = await post(subscription, stored?.endpoint, prompt);
        emit('herald:subscribed', { id: record.subscriberId });
      })().catch((error: unknown) => {
        reportError(error);
        retryLater(prompt);
      });
    }, POST_RETRY_DELAYS_MS[retries]);
  }

  const isRefusal = (error: unknown) => error instanceof HeraldError && error.code === 'api-error';

  /** Registers the worker, subscribes (replacing a subscription made with another key) and posts it. */
  async function subscribeAndPost(prompt?: PromptType): Promise<SubscriberRecord> {
    await writeConfig(pageSettings);
    const registration = await registerWorker(settings);
    const stored = await readSubscriber(settings.siteId);
    let subscription = await registration.pushManager.getSubscription();
    let replacedEndpoint: string | undefined;
    if (subscription && !subscribedWithKey(subscription, vapidKey)) {
      // A browser keeps one subscription per registration, bound to one key;
      // subscribing with another key fails until the old one is gone.
      replacedEndpoint = subscription.endpoint;
      await subscription.unsubscribe();
      subscription = null;
    }
    subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: vapidKey });
    try {
      return await post(subscription, stored?.endpoint ?? replacedEndpoint, prompt);
    } catch (error) {
      // The snippet carries a key the site has retired (an old copy of the
      // page): subscribe again with the primary key Herald names.
      if (error instanceof HeraldError && error.apiCode === 'unknown_vapid_key') {
        const primary = await fetchPrimaryKey(settings);
        if (primary && !subscribedWithKey(subscription, decodeBase64Url(primary))) {
          vapidKey = decodeBase64Url(primary);
          pageSettings = { ...settings, vapidKey: primary };
          await writeConfig(pageSettings);
          const previous = subscription.endpoint;
          await subscription.unsubscribe();
          const renewed = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: vapidKey });
          return post(renewed, stored?.endpoint ?? previous, prompt);
        }
      }
      if (isRefusal(error)) retryLater(prompt);
      throw error;
    }
  }

  async function postUnsubscribe(endpoint: string): Promise<void> {
    try {
      await postJson(siteEndpoint(settings, 'subscribers/unsubscribe'), { endpoint }, true);
    } catch (error) {
      // Herald does not know the endpoint (it was erased, or never accepted): there is nothing left to tell it.
      if (error instanceof HeraldError && error.apiCode === 'not_found') return;
      throw error;
    }
  }

  /**
   * The browser's subscription that Herald accepted last, made with another key
   * than this page's (an old copy of the page after a key rotation, Herald not
   * reachable to name the primary key): it works, so this page goes on with its
   * key instead of replacing it with one made with the older key.
   */
  async function adoptAcceptedSubscriptionKey(stored: SubscriberRecord | undefined): Promise<void> {
    if (!stored) return;
    const registration = await rootRegistration();
    const subscription = registration ? await registration.pushManager.getSubscription() : null;
    const key = subscription?.options?.applicationServerKey;
    if (!subscription || subscription.endpoint !== stored.endpoint || !key || subscribedWithKey(subscription, vapidKey)) return;
    vapidKey = new Uint8Array(key);
    pageSettings = { ...settings, vapidKey: encodeBase64Url(key) };
    // The worker renews with the key the page stored (worker/handlers.ts, loadConfig).
    await writeConfig(pageSettings);
  }

  /** Unsubscribes the browser; a push service it cannot reach now leaves it subscribed, which the opt-out record covers. */
  async function dropBrowserSubscription(subscription: PushSubscription | null): Promise<void> {
    try {
      await subscription?.unsubscribe();
    } catch (error) {
      console.warn('Herald: the browser could not unsubscribe; Herald will not send to it', error);
    }
  }

  /** Chrome revokes a subscription by moving its endpoint to `*.invalid` (docs/web-push.md): Herald refuses it, so it is replaced. */
  const isRevokedEndpoint = (endpoint: string) => {
    try {
      return new URL(endpoint).hostname.endsWith('.invalid');
    } catch {
      return false;
    }
  };

  /**
   * Page-load refresh: re-posts the subscription when its endpoint changed, a
   * day has passed or Herald never accepted it, re-subscribes a known
   * subscriber whose subscription the browser dropped (permission is already
   * granted, so no gesture is needed), and tells Herald when permission was
   * revoked in the browser's settings.
   */
  async function refresh(grantedOnLoad: boolean): Promise<void> {
    if (!pushSupported()) return;
    await writeConfig(settings);
    const stored = await readSubscriber(settings.siteId);
    if (Notification.permission !== 'granted' || stored?.optedOut) {
      if (stored) {
        // An unsubscribe the browser did not complete (the tab closed): finished here, so it is not posted again.
        if (stored.optedOut) await dropBrowserSubscription(await currentSubscription());
        await postUnsubscribe(stored.endpoint);
        await writeSubscriber(undefined);
      }
      return;
    }
    if (await movedToPrimaryKey(stored)) return;
    await adoptAcceptedSubscriptionKey(stored);
    const subscription = await currentSubscription();
    if (subscription && !stored && (await readOptedOut(settings.siteId))) {
      // The visitor unsubscribed through herald.unsubscribe() and the browser kept it: never posted again without asking.
      await dropBrowserSubscription(subscription);
      return;
    }
    // Only a subscription Herald accepted is replaced without asking; a revoked one never seen is left to the prompt.
    if (subscription && stored && isRevokedEndpoint(subscription.endpoint)) {
      await subscription.unsubscribe();
      await subscribeAndPost();
      return;
    }
    if (subscription) {
      const stale = !stored || stored.endpoint !== subscription.endpoint || Date.now() - stored.postedAt >= REFRESH_INTERVAL_MS;
      if (!stale) {
        acceptedEndpoint = stored.endpoint;
        return;
      }
      try {
        await post(subscription, stored?.endpoint);
      } catch (error) {
        // Posted before (only not refreshed today): Herald still knows this endpoint.
        if (stored?.endpoint === subscription.endpoint) acceptedEndpoint = stored.endpoint;
        else if (isRefusal(error)) retryLater(undefined);
        throw error;
      }
      return;
    }
    if (stored) {
      await subscribeAndPost();
      return;
    }
    // Granted by a click on this page since it loaded: that click's subscribe() does it.
    if (grantedOnLoad) await subscribeAlreadyGranted();
  }

  /**
   * A visitor who already allowed notifications (to this site's previous push
   * provider, say) but whose browser holds no subscription Herald knows:
   * subscribed with the site's primary key without any prompt, when the site
   * says so (setting `resubscribeGranted`; docs/product.md, Settings,
   * "visitors who already allowed notifications"). Another provider's
   * subscription on the same registration is replaced only with
   * `replaceForeignSubscription`; otherwise it is left and one warning says why.
   * A visitor who unsubscribed through herald.unsubscribe() is not subscribed again.
   */
  async function subscribeAlreadyGranted(): Promise<void> {
    if (await readOptedOut(settings.siteId)) return;
    const site = await fetchSiteSettings(settings);
    if (!site?.resubscribeGranted) return;
    if (site.primaryKey) {
      vapidKey = decodeBase64Url(site.primaryKey);
      pageSettings = { ...settings, vapidKey: site.primaryKey };
    }
    await writeConfig(pageSettings);
    const registration = await registerWorker(settings);
    const options = { userVisibleOnly: true, applicationServerKey: vapidKey };
    let subscription: PushSubscription;
    try {
      subscription = await registration.pushManager.subscribe(options);
    } catch (error) {
      const foreign = isInvalidState(error) ? await registration.pushManager.getSubscription() : null;
      if (!foreign || subscribedWithKey(foreign, vapidKey)) throw error;
      if (!site.replaceForeignSubscription) {
        console.warn(FOREIGN_SUBSCRIPTION_WARNING);
        return;
      }
      await foreign.unsubscribe();
      subscription = await registration.pushManager.subscribe(options);
    }
    let record: SubscriberRecord;
    try {
      record = await post(subscription, undefined);
    } catch (error) {
      if (isRefusal(error)) retryLater(undefined);
      throw error;
    }
    emit('herald:subscribed', { id: record.subscriberId });
  }

  /**
   * Key rotation (docs/web-push.md): when the browser's subscription was made
   * with another key than the site's primary one, it is replaced by one made
   * with the primary key and posted with `previous_endpoint`, so Herald moves
   * the same subscriber (id, tags, history) to it. Herald is asked for the
   * primary key when the subscription's key is not the snippet's, and with
   * the daily refresh otherwise, so a rotation reaches every browser within a
   * day without a request on every page view. True when it re-subscribed.
   */
  async function movedToPrimaryKey(stored: SubscriberRecord | undefined): Promise<boolean> {
    const registration = await rootRegistration();
    const subscription = registration ? await registration.pushManager.getSubscription() : null;
    if (!registration || !subscription) return false;
    // A subscription Herald does not know under this site is not ours to replace.
    if (!stored) return false;
    const dailyCheckDue = Date.now() - stored.postedAt >= REFRESH_INTERVAL_MS;
    if (subscribedWithKey(subscription, vapidKey) && !dailyCheckDue) return false;
    const primary = await fetchPrimaryKey(settings);
    if (!primary) return false;
    const primaryKey = decodeBase64Url(primary);
    vapidKey = primaryKey;
    pageSettings = { ...settings, vapidKey: primary };
    // The worker re-subscribes with this key on pushsubscriptionchange.
    await writeConfig(pageSettings);
    if (subscribedWithKey(subscription, primaryKey)) return false;
    // A browser keeps one subscription per registration, bound to one key:
    // the old one goes first. Permission is granted, so no gesture is needed.
    await subscription.unsubscribe();
    const renewed = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: primaryKey });
    try {
      // Herald knows this browser by the endpoint it last accepted.
      await post(renewed, stored.endpoint);
    } catch (error) {
      if (isRefusal(error)) retryLater(undefined);
      throw error;
    }
    return true;
  }

  const refreshed = refresh(pushSupported() && Notification.permission === 'granted').catch(reportError);

  /** The endpoint Herald knows this browser by; waits for the page-load refresh so a changed endpoint is posted first. */
  async function knownEndpoint(): Promise<string> {
    if (!pushSupported()) throw unsupported();
    await refreshed;
    const subscription = await currentSubscription();
    if (!subscription) throw new HeraldError('not-subscribed', 'This browser is not subscribed; call herald.subscribe() first.');
    return subscription.endpoint;
  }

  async function postForSubscriber(path: string, body: Record<string, unknown>): Promise<void> {
    const endpoint = await knownEndpoint();
    await postJson(siteEndpoint(settings, path), { endpoint, ...body }, true);
  }

  const herald: HeraldApi = {
    subscribe() {
      return subscribeFrom(undefined);
    },

    async unsubscribe() {
      if (!pushSupported()) return false;
      const subscription = await currentSubscription();
      const stored = await readSubscriber(settings.siteId);
      const endpoint = subscription?.endpoint ?? stored?.endpoint;
      if (subscription) {
        // Remembered first: if Herald cannot be told now, the next page load retries.
        await writeSubscriber({
          siteId: settings.siteId,
          subscriberId: stored?.subscriberId ?? '',
          postedAt: stored?.postedAt ?? 0,
          endpoint: subscription.endpoint,
          optedOut: true,
        });
      }
      acceptedEndpoint = undefined;
      // Kept after Herald is told, and written before the browser is asked (it may fail, or the tab close): a page
      // load must not subscribe this visitor again, nor post a subscription the browser kept, without asking.
      await writeOptedOut(settings.siteId);
      if (subscription) await dropBrowserSubscription(subscription);
      if (endpoint) await postUnsubscribe(endpoint);
      await writeSubscriber(undefined);
      emit('herald:unsubscribed', undefined);
      return Boolean(subscription);
    },

    /** True only once Herald has accepted this browser's subscription: a refused one is no subscription. */
    async isSubscribed() {
      if (!pushSupported()) return false;
      await refreshed;
      const subscription = await currentSubscription();
      if (!subscription) return false;
      if (subscription.endpoint === acceptedEndpoint) return true;
      // The worker may have renewed it (pushsubscriptionchange) and told Herald since this page loaded.
      const stored = await readSubscriber(settings.siteId);
      return stored !== undefined && !stored.optedOut && stored.endpoint === subscription.endpoint;
    },

    permission: currentPermission,

    async track(event, data, options = {}) {
      const body: Record<string, unknown> = { event: requireText(event, 'event') };
      if (data !== undefined) {
        if (typeof data !== 'object' || data === null || Array.isArray(data)) {
          throw new HeraldError('invalid-argument', 'data must be an object.');
        }
        body.data = data;
      }
      if (options.idempotencyKey !== undefined) body.idempotency_key = requireText(options.idempotencyKey, 'idempotencyKey');
      await postForSubscriber('track', body);
    },

    async identify(externalId, identityHash) {
      const body: Record<string, unknown> = { external_id: requireText(externalId, 'externalId') };
      if (identityHash !== undefined) body.identity_hash = requireText(identityHash, 'identityHash');
      await postForSubscriber('identify', body);
    },

    async addTags(tags) {
      await postForSubscriber('tags', { add: requireTags(tags) });
    },

    async removeTags(tags) {
      await postForSubscriber('tags', { remove: requireTags(tags) });
    },
  };
  function subscribeFrom(prompt: PromptType | undefined): Promise<{ id: string }> {
    if (!pushSupported()) return Promise.reject(unsupported());
    // Notification.requestPermission() runs synchronously, before any await,
    // so it is still inside the caller's user gesture: Safari and Firefox
    // ignore or refuse a permission request made outside one.
    const answer = Notification.requestPermission();
    subscribing ??= (async () => {
      const permission = await answer;
      if (permission === 'denied') {
        throw new HeraldError('permission-denied', 'Notifications are blocked for this site. Allow them in the browser’s site settings, then try again.');
      }
      if (permission !== 'granted') throw new HeraldError('permission-dismissed', 'Notification permission was not granted.');
      // The visitor asked to be subscribed: an earlier opt-out no longer stands, even if Herald cannot be told now
      // (the subscription the browser keeps is posted again later, never dropped as opted out).
      await writeOptedOut(undefined);
      // The page-load refresh may be subscribing this browser already (permission was granted before).
      await refreshed;
      const record = await subscribeAndPost(prompt);
      emit('herald:subscribed', { id: record.subscriberId });
      return { id: record.subscriberId };
    })().finally(() => {
      subscribing = undefined;
    });
    return subscribing;
  }

  async function claimTestDevice(code: string): Promise<TestDeviceInfo> {
    const subscription = await currentSubscription();
    if (!subscription) throw new HeraldError('not-subscribed', 'This browser is not subscribed; call herald.subscribe() first.');
    const data = (await postJson(siteEndpoint(settings, 'test-devices'), { endpoint: subscription.endpoint, code: requireText(code, 'code') })) as
      | { device?: TestDeviceInfo }
      | undefined;
    if (!data?.device || typeof data.device.name !== 'string') throw new HeraldError('api-error', 'Herald did not return the test device');
    emit('herald:test-device', { device: data.device });
    return data.device;
  }

  return { herald, refreshed, subscribeFrom, claimTestDevice };
}
