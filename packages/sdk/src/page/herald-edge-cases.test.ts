// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeBase64Url } from '../common/base64url';
import { readConfig, readSubscriber, writeSubscriber } from '../common/store';
import { installFakeBrowser, type FakeBrowser } from '../testing/fake-browser';
import { heraldResponder, json, recordFetch, type FetchRecorder, type RecordedRequest } from '../testing/fetch-recorder';
import { OTHER_KEY, SITE_KEY } from '../testing/keys';
import { createHerald, type HeraldApi } from './herald';
import type { PageSettings } from './script-settings';

// The page script at its edges: Herald not knowing an endpoint on unsubscribe,
// a key rotation while Herald is unreachable, a subscription Chrome revoked,
// an unsubscribe the browser could not complete.

const API = 'https://herald.example';
const settings: PageSettings = { siteId: 'site_1', api: API, vapidKey: SITE_KEY, ownWorker: null, prompt: 'manual' };
const HERALD_WORKER_URL = `/herald-sw.js?site=site_1&api=${encodeURIComponent(API)}&key=${SITE_KEY}`;

let browser: FakeBrowser;
let network: FetchRecorder;

beforeEach(() => {
  browser = installFakeBrowser();
  network = recordFetch();
  vi.spyOn(console, 'warn').mockImplementation(() => {});
});

afterEach(() => {
  browser.uninstall();
  network.restore();
  vi.restoreAllMocks();
});

async function loadPage(pageSettings: PageSettings = settings): Promise<HeraldApi> {
  const { herald, refreshed } = createHerald(pageSettings);
  await refreshed;
  return herald;
}

function rootRegistration() {
  const registration = browser.serviceWorker.registrations.get(new URL('/', location.href).href);
  if (!registration) throw new Error('no root registration');
  return registration;
}

const path = (request: RecordedRequest) => new URL(request.url).pathname;

describe('Herald answers 404 to the unsubscribe (it does not know the endpoint)', () => {
  /** Herald as after the site erased the subscriber (privacy erase / dashboard delete): the endpoint is unknown. */
  const erased = (request: RecordedRequest) =>
    path(request).endsWith('/subscribers/unsubscribe')
      ? json(404, { success: false, error: { message: 'Subscriber not found', code: 'not_found' } })
      : heraldResponder(request);

  it('stops telling Herald on every page load once Herald says it does not know the endpoint', async () => {
    const herald = await loadPage();
    await browser.userGesture(() => herald.subscribe());
    network.respondWith(erased);
    // The visitor blocks notifications in the browser's settings.
    browser.push.permission = 'denied';
    rootRegistration().pushManager.current = null;
    const errors: string[] = [];
    const listener = (event: Event) => errors.push((event as CustomEvent<{ error: Error }>).detail.error.message);
    window.addEventListener('herald:error', listener);

    network.requests.length = 0;
    await loadPage();
    await loadPage();
    await loadPage();
    window.removeEventListener('herald:error', listener);

    // Once is enough: Herald has no such subscriber. Today: one request and one herald:error per page view, forever.
    expect(network.to('/subscribers/unsubscribe')).toHaveLength(1);
    expect(errors).toEqual([]);
    expect(await readSubscriber('site_1')).toBeUndefined();
  });

  it('herald.unsubscribe() of a subscription Herald never accepted resolves, and later page loads send nothing', async () => {
    // Herald refused the subscription (e.g. a 429 or a 5xx), the browser kept it.
    network.respondWith((request) => (path(request).endsWith('/subscribers') ? json(503, { success: false, error: { message: 'busy' } }) : erased(request)));
    const herald = await loadPage();
    await browser.userGesture(() => herald.subscribe()).catch(() => undefined);
    expect(rootRegistration().pushManager.current).not.toBeNull();

    await expect(herald.unsubscribe()).resolves.toBe(true);
    network.requests.length = 0;
    await loadPage();
    await loadPage();
    expect(network.to('/subscribers/unsubscribe')).toHaveLength(0);
  });
});

describe('key rotation while Herald is unreachable', () => {
  it('keeps a working subscription made with the primary key when the page (an old copy) carries the older key and Herald cannot be asked', async () => {
    // Earlier page view: the SDK moved this browser to the primary key OTHER_KEY (movedToPrimaryKey) and Herald accepted it.
    browser.push.permission = 'granted';
    const registration = await browser.serviceWorker.preinstall(HERALD_WORKER_URL);
    const moved = registration.pushManager.adopt('https://push.example/send/moved', decodeBase64Url(OTHER_KEY).buffer);
    await writeSubscriber({ siteId: 'site_1', endpoint: moved.endpoint, subscriberId: 'sub_1', postedAt: Date.now() });

    // Today Herald cannot be reached for a moment; the page's snippet still says data-vapid-key=SITE_KEY.
    network.respondWith(() => 'network-error');
    await loadPage();

    // Nothing known is wrong with the subscription Herald has: it should be left alone.
    expect(moved.unsubscribed).toBe(false);
    expect(registration.pushManager.current?.endpoint).toBe('https://push.example/send/moved');
    expect(await readConfig()).toMatchObject({ vapidKey: OTHER_KEY });
  });
});

describe('a subscription Chrome revoked (endpoint on permanently-removed.invalid)', () => {
  it('re-subscribes instead of posting the dead endpoint Herald refuses', async () => {
    browser.push.permission = 'granted';
    const registration = await browser.serviceWorker.preinstall(HERALD_WORKER_URL);
    registration.pushManager.adopt('https://permanently-removed.invalid/fcm/send/abc', decodeBase64Url(SITE_KEY).buffer);
    await writeSubscriber({ siteId: 'site_1', endpoint: 'https://fcm.googleapis.com/fcm/send/abc', subscriberId: 'sub_1', postedAt: Date.now() });
    // Herald refuses endpoints outside its push-service allow-list (features/subscribers/push-subscription.ts).
    network.respondWith((request) => {
      const endpoint = (request.body as { subscription?: { endpoint?: string } } | undefined)?.subscription?.endpoint ?? '';
      if (path(request).endsWith('/subscribers') && new URL(endpoint).hostname.endsWith('.invalid')) {
        return json(400, { success: false, error: { message: 'subscription.endpoint is not a known push service', code: 'invalid_subscription' } });
      }
      return heraldResponder(request);
    });

    const herald = await loadPage();

    const posted = network.to('/subscribers').map((request) => (request.body as { subscription: { endpoint: string } }).subscription.endpoint);
    expect(posted.at(-1)).not.toMatch(/\.invalid\//);
    expect(await herald.isSubscribed()).toBe(true);
  });
});

describe('herald.unsubscribe() interrupted after Herald was to be told', () => {
  it('never posts the visitor’s subscription to Herald again after they unsubscribed, even if the browser unsubscribe did not complete', async () => {
    const herald = await loadPage();
    await browser.userGesture(() => herald.subscribe());
    const subscription = rootRegistration().pushManager.current!;
    // The push service could not be reached / the tab was closed mid-way: the browser keeps its subscription.
    subscription.unsubscribe = async () => {
      throw new DOMException('Push service unreachable', 'AbortError');
    };
    await herald.unsubscribe().catch(() => undefined);

    // Herald was told at once, although the browser kept its subscription.
    expect(network.to('/subscribers/unsubscribe')).toHaveLength(1);
    network.requests.length = 0;
    await loadPage();
    await loadPage();
    // Later page loads neither tell Herald again nor post the subscription the browser kept (Herald would reactivate it).
    expect(network.to('/subscribers/unsubscribe')).toHaveLength(0);
    expect(network.to('/subscribers')).toHaveLength(0);
  });
});

describe('a visitor who unsubscribed, then allowed notifications again', () => {
  it('keeps the new subscription when Herald could not be told at once: the next page posts it, never drops it as opted out', async () => {
    const herald = await loadPage();
    await browser.userGesture(() => herald.subscribe());
    await herald.unsubscribe();
    // They allow again, while Herald cannot be reached.
    network.respondWith(() => 'network-error');
    await browser.userGesture(() => herald.subscribe()).catch(() => undefined);
    const kept = rootRegistration().pushManager.current;
    expect(kept).toBeDefined();
    // Next page, Herald back: the subscription the browser kept is posted, not unsubscribed.
    network.respondWith(heraldResponder);
    network.requests.length = 0;
    await loadPage();
    expect(kept!.unsubscribed).toBe(false);
    expect(network.to('/subscribers').map((request) => (request.body as { subscription: { endpoint: string } }).subscription.endpoint)).toEqual([kept!.endpoint]);
  });

  it('a revoked subscription the browser kept after an unsubscribe is not replaced without asking', async () => {
    const herald = await loadPage();
    await browser.userGesture(() => herald.subscribe());
    const subscription = rootRegistration().pushManager.current!;
    subscription.unsubscribe = async () => {
      throw new DOMException('Push service unreachable', 'AbortError');
    };
    await herald.unsubscribe();
    // Chrome later revokes the subscription the browser kept.
    rootRegistration().pushManager.adopt('https://permanently-removed.invalid/fcm/send/kept', decodeBase64Url(SITE_KEY).buffer);
    network.requests.length = 0;
    await loadPage();
    expect(network.to('/subscribers')).toHaveLength(0);
  });
});

