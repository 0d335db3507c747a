// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeBase64Url } from '../common/base64url';
import { HeraldError } from '../common/errors';
import { readConfig, readSubscriber, writeSubscriber } from '../common/store';
import { installFakeBrowser, type FakeBrowser } from '../testing/fake-browser';
import { heraldResponder, recordFetch, json, type FetchRecorder } from '../testing/fetch-recorder';
import { OTHER_KEY, SITE_KEY } from '../testing/keys';
import { createHerald, POST_RETRY_DELAYS_MS, REFRESH_INTERVAL_MS, type HeraldApi } from './herald';
import type { PageSettings } from './script-settings';

const API = 'https://herald.example';
const SUBSCRIBERS_URL = `${API}/api/public/sites/site_1/subscribers`;
const settings: PageSettings = { siteId: 'site_1', api: API, vapidKey: SITE_KEY, ownWorker: null, prompt: 'manual' };
const HERALD_WORKER_URL = `/herald-sw.js?site=site_1&api=${encodeURIComponent(API)}&key=${SITE_KEY}`;

let browser: FakeBrowser;
let network: FetchRecorder;

beforeEach(() => {
  browser = installFakeBrowser();
  network = recordFetch();
});

afterEach(() => {
  browser.uninstall();
  network.restore();
});

/** A page load: the snippet creates Herald and its page-load refresh runs. */
async function loadPage(pageSettings: PageSettings = settings): Promise<HeraldApi> {
  const { herald, refreshed } = createHerald(pageSettings);
  await refreshed;
  return herald;
}

async function subscribeByClick(herald: HeraldApi) {
  return browser.userGesture(() => herald.subscribe());
}

function rootRegistration() {
  const registration = browser.serviceWorker.registrations.get(new URL('/', location.href).href);
  if (!registration) throw new Error('no root registration');
  return registration;
}

async function rejection(promise: Promise<unknown>): Promise<HeraldError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(HeraldError);
  return error as HeraldError;
}

describe('herald.subscribe()', () => {
  it('asks permission inside the click, registers the worker at the root and posts exactly the contract body', async () => {
    const herald = await loadPage();
    const subscribed: unknown[] = [];
    window.addEventListener('herald:subscribed', (event) => subscribed.push((event as CustomEvent).detail));

    await expect(subscribeByClick(herald)).resolves.toEqual({ id: 'sub_1' });

    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    expect(browser.serviceWorker.registerCalls).toEqual([{ scriptURL: HERALD_WORKER_URL, options: { scope: '/', updateViaCache: 'none' } }]);
    const { pushManager } = rootRegistration();
    expect(pushManager.subscribeCalls).toHaveLength(1);
    expect(pushManager.subscribeCalls[0]?.userVisibleOnly).toBe(true);
    expect([...new Uint8Array(pushManager.subscribeCalls[0]?.applicationServerKey as Uint8Array)]).toEqual([...decodeBase64Url(SITE_KEY)]);

    expect(network.requests).toHaveLength(1);
    const [request] = network.requests;
    expect(request?.url).toBe(SUBSCRIBERS_URL);
    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.init.credentials).toBe('omit');
    expect(request?.body).toStrictEqual({
      // PushSubscription.toJSON(): the fake's keys are 65 bytes of 0x04 and 16 bytes of 0x07.
      subscription: {
        endpoint: 'https://push.example/send/1',
        expirationTime: null,
        keys: { p256dh: btoa('\x04'.repeat(65)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), auth: 'BwcHBwcHBwcHBwcHBwcHBw' },
      },
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      language: navigator.language,
      // The key the subscription was made with: Herald signs its pushes with it.
      vapid_public_key: SITE_KEY,
    });

    expect(await readSubscriber('site_1')).toMatchObject({ siteId: 'site_1', endpoint: 'https://push.example/send/1', subscriberId: 'sub_1' });
    expect(await readConfig()).toEqual({ siteId: 'site_1', api: API, vapidKey: SITE_KEY });
    expect(subscribed).toEqual([{ id: 'sub_1' }]);
    expect(await herald.isSubscribed()).toBe(true);
    expect(herald.permission()).toBe('granted');
  });

  it('is not granted when called outside a user gesture: the browser does not prompt and nothing is sent', async () => {
    const herald = await loadPage();
    const error = await rejection(herald.subscribe());
    expect(error.code).toBe('permission-dismissed');
    expect(browser.permissionRequests).toEqual([{ prompted: false }]);
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(network.requests).toEqual([]);
  });

  it('rejects with a clear error and sends nothing when notifications are blocked', async () => {
    browser.push.permission = 'denied';
    const herald = await loadPage();
    const error = await rejection(subscribeByClick(herald));
    expect(error.code).toBe('permission-denied');
    expect(error.message).toBe('Notifications are blocked for this site. Allow them in the browser’s site settings, then try again.');
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(network.requests).toEqual([]);
  });

  it('rejects when the visitor answers "Block" in the native prompt', async () => {
    browser.answer = 'denied';
    const herald = await loadPage();
    expect((await rejection(subscribeByClick(herald))).code).toBe('permission-denied');
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    expect(network.requests).toEqual([]);
  });

  it('replaces a subscription made with another VAPID key and names the old endpoint', async () => {
    browser.push.permission = 'granted';
    const registration = await browser.serviceWorker.preinstall(HERALD_WORKER_URL);
    const old = registration.pushManager.adopt('https://push.example/send/old', decodeBase64Url(OTHER_KEY).buffer);
    const herald = await loadPage();
    expect(await herald.isSubscribed()).toBe(false);
    // Permission is granted: the page load asked Herald whether to subscribe such a visitor (this Herald names no setting: off).
    expect(network.requests.map((request) => new URL(request.url).pathname)).toEqual(['/api/public/sites/site_1/prompt-settings']);

    await subscribeByClick(herald);

    expect(old.unsubscribed).toBe(true);
    const current = registration.pushManager.current;
    expect(current?.endpoint).toBe('https://push.example/send/1');
    expect([...new Uint8Array(current?.options.applicationServerKey as ArrayBuffer)]).toEqual([...decodeBase64Url(SITE_KEY)]);
    expect(network.to('/subscribers').map((request) => request.body)).toEqual([
      expect.objectContaining({ subscription: expect.objectContaining({ endpoint: 'https://push.example/send/1' }), previous_endpoint: 'https://push.example/send/old' }),
    ]);
  });

  it('keeps a subscription that already uses the site key', async () => {
    browser.push.permission = 'granted';
    const registration = await browser.serviceWorker.preinstall(HERALD_WORKER_URL);
    registration.pushManager.adopt('https://push.example/send/kept', decodeBase64Url(SITE_KEY).buffer);
    await writeSubscriber({ siteId: 'site_1', endpoint: 'https://push.example/send/kept', subscriberId: 'sub_1', postedAt: Date.now() });
    const herald = await loadPage();
    expect(network.requests).toEqual([]);

    await subscribeByClick(herald);

    expect(registration.pushManager.subscribeCalls).toEqual([]);
    expect(browser.serviceWorker.registerCalls).toEqual([{ scriptURL: HERALD_WORKER_URL, options: { scope: '/', updateViaCache: 'none' } }]);
    expect(network.requests.map((request) => (request.body as any).subscription.endpoint)).toEqual(['https://push.example/send/kept']);
    expect(network.requests[0]?.body).not.toHaveProperty('previous_endpoint');
  });

  it('refuses to replace another service worker that controls the site root', async () => {
    await browser.serviceWorker.preinstall('/sw.js');
    const herald = await loadPage();
    const error = await rejection(subscribeByClick(herald));
    expect(error.code).toBe('worker-failed');
    expect(error.message).toContain('Another service worker (/sw.js) controls this site');
    expect(error.message).toContain('data-worker="/sw.js"');
    expect(rootRegistration().active?.scriptURL).toBe(new URL('/sw.js', location.href).href);
    expect(network.requests).toEqual([]);
  });

  it('registers the site’s own worker as given when data-worker is set', async () => {
    await browser.serviceWorker.preinstall('/sw.js');
    const herald = await loadPage({ ...settings, ownWorker: '/sw.js' });
    await subscribeByClick(herald);
    expect(browser.serviceWorker.registerCalls).toEqual([{ scriptURL: '/sw.js', options: { scope: '/' } }]);
    expect(network.to('/subscribers')).toHaveLength(1);
    // The imported worker has no query: it finds its site in IndexedDB.
    expect(await readConfig()).toEqual({ siteId: 'site_1', api: API, vapidKey: SITE_KEY });
  });

  it('reports a worker that fails to install', async () => {
    browser.serviceWorker.failInstall = true;
    const herald = await loadPage();
    const error = await rejection(subscribeByClick(herald));
    expect(error.code).toBe('worker-failed');
    expect(error.message).toBe('The service worker /herald-sw.js failed to install; check that it is served from the site root.');
    expect(network.requests).toEqual([]);
  });

  it('passes Herald’s error message on and stores nothing when Herald refuses', async () => {
    network.respondWith(() => json(400, { success: false, error: { message: 'Site not found' } }));
    const herald = await loadPage();
    const error = await rejection(subscribeByClick(herald));
    expect(error.code).toBe('api-error');
    expect(error.message).toBe('Herald refused the request: Site not found');
    expect(await readSubscriber('site_1')).toBeUndefined();
  });

  it('shares one attempt between concurrent calls', async () => {
    const herald = await loadPage();
    const [first, second] = await browser.userGesture(() => Promise.all([herald.subscribe(), herald.subscribe()]));
    expect(first).toEqual(second);
    expect(network.to('/subscribers')).toHaveLength(1);
  });
});

describe('herald.unsubscribe()', () => {
  it('removes the browser subscription and tells Herald', async () => {
    const herald = await loadPage();
    await subscribeByClick(herald);
    const subscription = rootRegistration().pushManager.current;

    await expect(herald.unsubscribe()).resolves.toBe(true);

    expect(subscription?.unsubscribed).toBe(true);
    expect(network.to('/subscribers/unsubscribe').map((request) => request.body)).toEqual([{ endpoint: 'https://push.example/send/1' }]);
    expect(await herald.isSubscribed()).toBe(false);
    expect(await readSubscriber('site_1')).toBeUndefined();
    await expect(herald.unsubscribe()).resolves.toBe(false);
    expect(network.to('/subscribers/unsubscribe')).toHaveLength(1);
  });

  it('retries telling Herald on the next page load when it was unreachable, and does not re-subscribe', async () => {
    const herald = await loadPage();
    await subscribeByClick(herald);
    network.respondWith(() => 'network-error');
    expect((await rejection(herald.unsubscribe())).code).toBe('api-error');

    network.respondWith(() => json(200, { success: true, data: {} }));
    const requestsBefore = network.requests.length;
    await loadPage();
    expect(network.requests.slice(requestsBefore).map((request) => [new URL(request.url).pathname, request.body])).toEqual([
      ['/api/public/sites/site_1/subscribers/unsubscribe', { endpoint: 'https://push.example/send/1' }],
    ]);
    expect(rootRegistration().pushManager.current).toBeNull();
    expect(await readSubscriber('site_1')).toBeUndefined();
  });
});

/** HMAC-SHA256('identity-secret', 'customer-42') as the site's backend computes it. */
const IDENTITY_HASH = '4b500fbb2b59551c435bc6c07924cecd53f9bf7ede108ce64368fae714ff3491';

describe('track, identify and tags', () => {
  it('send the subscriber’s endpoint with each call', async () => {
    const herald = await loadPage();
    await subscribeByClick(herald);
    const endpoint = 'https://push.example/send/1';

    await herald.track('purchase', { amount: 49.5, currency: 'EUR' }, { idempotencyKey: 'order-1001' });
    await herald.track('signup');
    await herald.identify('customer-42');
    await herald.identify('customer-42', IDENTITY_HASH);
    await herald.addTags(['vip', 'newsletter']);
    await herald.removeTags(['newsletter']);

    expect(network.requests.slice(1).map((request) => [request.url, request.body])).toStrictEqual([
      [`${API}/api/public/sites/site_1/track`, { endpoint, event: 'purchase', data: { amount: 49.5, currency: 'EUR' }, idempotency_key: 'order-1001' }],
      [`${API}/api/public/sites/site_1/track`, { endpoint, event: 'signup' }],
      [`${API}/api/public/sites/site_1/identify`, { endpoint, external_id: 'customer-42' }],
      [`${API}/api/public/sites/site_1/identify`, { endpoint, external_id: 'customer-42', identity_hash: IDENTITY_HASH }],
      [`${API}/api/public/sites/site_1/tags`, { endpoint, add: ['vip', 'newsletter'] }],
      [`${API}/api/public/sites/site_1/tags`, { endpoint, remove: ['newsletter'] }],
    ]);
    expect(network.requests.every((request) => request.init.keepalive === true || request.url === SUBSCRIBERS_URL)).toBe(true);
  });

  it('reject without a request when this browser is not subscribed', async () => {
    const herald = await loadPage();
    expect((await rejection(herald.track('purchase'))).code).toBe('not-subscribed');
    expect((await rejection(herald.identify('customer-42'))).code).toBe('not-subscribed');
    expect((await rejection(herald.addTags(['vip']))).code).toBe('not-subscribed');
    expect(network.requests).toEqual([]);
  });

  it('reject invalid arguments', async () => {
    const herald = await loadPage();
    await subscribeByClick(herald);
    expect((await rejection(herald.track(''))).code).toBe('invalid-argument');
    expect((await rejection(herald.track('purchase', [1] as never))).code).toBe('invalid-argument');
    expect((await rejection(herald.identify(' '))).code).toBe('invalid-argument');
    expect((await rejection(herald.identify('customer-42', ''))).code).toBe('invalid-argument');
    expect((await rejection(herald.identify('customer-42', 42 as never))).code).toBe('invalid-argument');
    expect((await rejection(herald.addTags([]))).code).toBe('invalid-argument');
    expect((await rejection(herald.removeTags(['ok', 3 as never]))).code).toBe('invalid-argument');
    expect(network.requests).toHaveLength(1);
  });
});

describe('page-load refresh', () => {
  async function subscribedEarlier(postedAt: number, storedEndpoint = 'https://push.example/send/1') {
    const herald = await loadPage();
    await subscribeByClick(herald);
    await writeSubscriber({ siteId: 'site_1', endpoint: storedEndpoint, subscriberId: 'sub_1', postedAt });
    network.requests.length = 0;
  }

  it('sends nothing when the subscription was posted less than a day ago', async () => {
    await subscribedEarlier(Date.now() - REFRESH_INTERVAL_MS + 60_000);
    await loadPage();
    expect(network.requests).toEqual([]);
  });

  it('re-posts the subscription once a day (after asking Herald for the primary key)', async () => {
    await subscribedEarlier(Date.now() - REFRESH_INTERVAL_MS - 1);
    await loadPage();
    expect(network.requests.map((request) => [request.method, new URL(request.url).pathname])).toEqual([
      ['GET', '/api/public/sites/site_1/prompt-settings'],
      ['POST', '/api/public/sites/site_1/subscribers'],
    ]);
    expect(network.to('/subscribers').map((request) => request.body)).toEqual([
      { subscription: expect.objectContaining({ endpoint: 'https://push.example/send/1' }), timezone: expect.any(String), language: navigator.language, vapid_public_key: SITE_KEY },
    ]);
    expect((await readSubscriber('site_1'))?.postedAt).toBeGreaterThan(Date.now() - 5000);
  });

  it('re-posts a changed endpoint with the one Herald knew', async () => {
    await subscribedEarlier(Date.now(), 'https://push.example/send/was');
    await loadPage();
    expect(network.requests.map((request) => request.body)).toEqual([
      expect.objectContaining({ subscription: expect.objectContaining({ endpoint: 'https://push.example/send/1' }), previous_endpoint: 'https://push.example/send/was' }),
    ]);
    expect((await readSubscriber('site_1'))?.endpoint).toBe('https://push.example/send/1');
  });

  it('re-subscribes a known subscriber whose subscription the browser dropped, without prompting', async () => {
    await subscribedEarlier(Date.now());
    rootRegistration().pushManager.current = null;
    const herald = await loadPage();
    expect(browser.permissionRequests).toHaveLength(1);
    expect(network.requests.map((request) => request.body)).toEqual([
      expect.objectContaining({ subscription: expect.objectContaining({ endpoint: 'https://push.example/send/2' }), previous_endpoint: 'https://push.example/send/1' }),
    ]);
    expect(await herald.isSubscribed()).toBe(true);
  });

  it('tells Herald when permission was revoked in the browser', async () => {
    await subscribedEarlier(Date.now());
    browser.push.permission = 'denied';
    rootRegistration().pushManager.current = null;
    await loadPage();
    expect(network.requests.map((request) => [new URL(request.url).pathname, request.body])).toEqual([
      ['/api/public/sites/site_1/subscribers/unsubscribe', { endpoint: 'https://push.example/send/1' }],
    ]);
    expect(await readSubscriber('site_1')).toBeUndefined();
  });

  it('never asks for permission and sends nothing for a new visitor', async () => {
    const herald = await loadPage();
    expect(browser.permissionRequests).toEqual([]);
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(network.requests).toEqual([]);
    expect(herald.permission()).toBe('default');
    // The configuration is there for a worker imported into the site's own one.
    expect(await readConfig()).toEqual({ siteId: 'site_1', api: API, vapidKey: SITE_KEY });
  });

  it('reports a failed refresh as a herald:error event', async () => {
    await subscribedEarlier(Date.now() - REFRESH_INTERVAL_MS - 1);
    network.respondWith(() => 'network-error');
    const errors: Error[] = [];
    const listener = (event: Event) => errors.push((event as CustomEvent<{ error: Error }>).detail.error);
    window.addEventListener('herald:error', listener);
    await loadPage();
    window.removeEventListener('herald:error', listener);
    expect(errors.map((error) => error.message)).toEqual(['Could not reach Herald at https://herald.example']);
  });
});

describe('key rotation: moving a subscription to the site’s primary VAPID key', () => {
  /** Herald's answers, with `primary` as the site's primary key in the SDK's settings. */
  const withPrimary = (primary: string | undefined) => (request: Parameters<typeof heraldResponder>[0]) => {
    if (new URL(request.url).pathname.endsWith('/prompt-settings')) {
      return primary === undefined ? 'network-error' : json(200, { success: true, data: { prompt: {}, vapid_public_key: primary } });
    }
    if (new URL(request.url).pathname.endsWith('/subscribers')) return json(200, { success: true, data: { subscriber: { id: 'sub_1' } } });
    return heraldResponder(request);
  };

  async function subscribedWithSiteKey(postedAt: number) {
    const herald = await loadPage();
    await subscribeByClick(herald);
    await writeSubscriber({ siteId: 'site_1', endpoint: 'https://push.example/send/1', subscriberId: 'sub_1', postedAt });
    network.requests.length = 0;
  }

  it('unsubscribes a subscription made with an older key and subscribes with the primary one, naming the old endpoint', async () => {
    await subscribedWithSiteKey(Date.now() - REFRESH_INTERVAL_MS - 1);
    const old = rootRegistration().pushManager.current!;
    network.respondWith(withPrimary(OTHER_KEY));

    const herald = await loadPage();

    expect(old.unsubscribed).toBe(true);
    const renewed = rootRegistration().pushManager.current!;
    expect(renewed.endpoint).toBe('https://push.example/send/2');
    expect([...new Uint8Array(renewed.options.applicationServerKey!)]).toEqual([...decodeBase64Url(OTHER_KEY)]);
    // No permission prompt: it is granted already.
    expect(browser.permissionRequests).toHaveLength(1);
    expect(network.to('/subscribers').map((request) => request.body)).toEqual([
      {
        subscription: expect.objectContaining({ endpoint: 'https://push.example/send/2' }),
        timezone: expect.any(String),
        language: navigator.language,
        previous_endpoint: 'https://push.example/send/1',
        vapid_public_key: OTHER_KEY,
      },
    ]);
    expect(await readSubscriber('site_1')).toMatchObject({ endpoint: 'https://push.example/send/2', subscriberId: 'sub_1' });
    // The worker re-subscribes with the primary key from now on (pushsubscriptionchange).
    expect(await readConfig()).toEqual({ siteId: 'site_1', api: API, vapidKey: OTHER_KEY });
    expect(await herald.isSubscribed()).toBe(true);
  });

  it('asks Herald at once when the snippet carries another key than the subscription, without waiting for the daily refresh', async () => {
    await subscribedWithSiteKey(Date.now());
    network.respondWith(withPrimary(OTHER_KEY));

    await loadPage({ ...settings, vapidKey: OTHER_KEY });

    expect(network.requests.map((request) => [request.method, new URL(request.url).pathname])).toEqual([
      ['GET', '/api/public/sites/site_1/prompt-settings'],
      ['POST', '/api/public/sites/site_1/subscribers'],
    ]);
    expect(network.to('/subscribers')[0]?.body).toMatchObject({ previous_endpoint: 'https://push.example/send/1', vapid_public_key: OTHER_KEY });
  });

  it('subscribes with the primary key when the snippet’s key was retired (an old copy of the page)', async () => {
    network.respondWith((request) => {
      const path = new URL(request.url).pathname;
      if (path.endsWith('/prompt-settings')) return json(200, { success: true, data: { prompt: {}, vapid_public_key: OTHER_KEY } });
      if (path.endsWith('/subscribers')) {
        return (request.body as { vapid_public_key?: string }).vapid_public_key === OTHER_KEY
          ? json(201, { success: true, data: { subscriber: { id: 'sub_9' } } })
          : json(400, { success: false, error: { message: 'vapid_public_key is not one of this site’s VAPID keys', code: 'unknown_vapid_key' } });
      }
      return heraldResponder(request);
    });
    const herald = await loadPage();

    await expect(subscribeByClick(herald)).resolves.toEqual({ id: 'sub_9' });

    const { pushManager } = rootRegistration();
    expect([...new Uint8Array(pushManager.current!.options.applicationServerKey!)]).toEqual([...decodeBase64Url(OTHER_KEY)]);
    expect(network.to('/subscribers').map((request) => (request.body as { vapid_public_key: string }).vapid_public_key)).toEqual([SITE_KEY, OTHER_KEY]);
    expect(network.to('/subscribers')[1]?.body).toMatchObject({ previous_endpoint: 'https://push.example/send/1' });
    expect(await herald.isSubscribed()).toBe(true);
  });

  it('keeps a subscription made with the primary key, and one it cannot check while Herald is unreachable', async () => {
    await subscribedWithSiteKey(Date.now() - REFRESH_INTERVAL_MS - 1);
    network.respondWith(withPrimary(SITE_KEY));
    await loadPage();
    expect(rootRegistration().pushManager.subscribeCalls).toHaveLength(1);
    expect(network.to('/subscribers').map((request) => request.body)).toEqual([expect.not.objectContaining({ previous_endpoint: expect.anything() })]);

    await writeSubscriber({ siteId: 'site_1', endpoint: 'https://push.example/send/1', subscriberId: 'sub_1', postedAt: Date.now() - REFRESH_INTERVAL_MS - 1 });
    network.requests.length = 0;
    network.respondWith(withPrimary(undefined));
    await loadPage();
    expect(rootRegistration().pushManager.current?.endpoint).toBe('https://push.example/send/1');
    expect(rootRegistration().pushManager.subscribeCalls).toHaveLength(1);
  });

  it('sends nothing more on a page view within the day when the subscription is on the snippet’s key', async () => {
    await subscribedWithSiteKey(Date.now());
    network.respondWith(withPrimary(OTHER_KEY));
    await loadPage();
    expect(network.requests).toEqual([]);
  });
});

describe('when Herald refuses the subscription', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Runs the fake clock in small steps until the expectation holds. */
  async function until(expectation: () => unknown): Promise<void> {
    for (let step = 0; ; step++) {
      try {
        await expectation();
        return;
      } catch (error) {
        if (step > 500) throw error;
        await vi.advanceTimersByTimeAsync(10);
      }
    }
  }

  it('isSubscribed() and the events say so, and the SDK posts the subscription again later until Herald accepts it', async () => {
    let refuse = true;
    network.respondWith((request) => (refuse ? json(503, { success: false, error: { message: 'Herald is restarting' } }) : heraldResponder(request)));
    const herald = await loadPage();
    const subscribed: unknown[] = [];
    const errors: string[] = [];
    window.addEventListener('herald:subscribed', (event) => subscribed.push((event as CustomEvent).detail));
    window.addEventListener('herald:error', (event) => errors.push((event as CustomEvent<{ error: Error }>).detail.error.message));

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let rejected: HeraldError | undefined;
    subscribeByClick(herald).catch((error: HeraldError) => (rejected = error));
    await until(() => expect(rejected).toBeDefined());
    expect(rejected?.message).toBe('Herald refused the request: Herald is restarting');
    // The browser holds a subscription, but Herald does not know it: not subscribed, no herald:subscribed.
    expect(rootRegistration().pushManager.current).not.toBeNull();
    let answer: boolean | undefined;
    void herald.isSubscribed().then((value) => (answer = value));
    await until(() => expect(answer).toBe(false));
    expect(subscribed).toEqual([]);
    expect(await readSubscriber('site_1')).toBeUndefined();

    // The first retry is refused too (reported as herald:error); the second is accepted.
    await vi.advanceTimersByTimeAsync(POST_RETRY_DELAYS_MS[0]);
    await until(() => expect(errors).toEqual(['Herald refused the request: Herald is restarting']));
    expect(network.to('/subscribers')).toHaveLength(2);
    refuse = false;
    await vi.advanceTimersByTimeAsync(POST_RETRY_DELAYS_MS[1]);
    await until(() => expect(subscribed).toEqual([{ id: 'sub_1' }]));
    expect(network.to('/subscribers')).toHaveLength(3);
    answer = undefined;
    void herald.isSubscribed().then((value) => (answer = value));
    await until(() => expect(answer).toBe(true));
    // Accepted: nothing more is retried.
    await vi.advanceTimersByTimeAsync(POST_RETRY_DELAYS_MS[2] * 2);
    expect(network.to('/subscribers')).toHaveLength(3);
  });

  it('gives up after its retries, and the next page load posts the subscription again', async () => {
    network.respondWith(() => json(500, { success: false, error: { message: 'Internal server error' } }));
    const herald = await loadPage();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let settled = false;
    subscribeByClick(herald).catch(() => (settled = true));
    await until(() => expect(settled).toBe(true));
    for (const delay of POST_RETRY_DELAYS_MS) await vi.advanceTimersByTimeAsync(delay + 100);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(network.to('/subscribers')).toHaveLength(1 + POST_RETRY_DELAYS_MS.length);
    vi.useRealTimers();

    network.respondWith(heraldResponder);
    const later = await loadPage();
    expect(network.to('/subscribers')).toHaveLength(2 + POST_RETRY_DELAYS_MS.length);
    expect(await later.isSubscribed()).toBe(true);
  });
});

describe('where push is unsupported', () => {
  it('reports it and does nothing else', async () => {
    browser.uninstall();
    const herald = await loadPage();
    expect(herald.permission()).toBe('unsupported');
    expect((await rejection(herald.subscribe())).code).toBe('unsupported');
    expect(await herald.isSubscribed()).toBe(false);
    expect(await herald.unsubscribe()).toBe(false);
    expect((await rejection(herald.track('purchase'))).code).toBe('unsupported');
    expect(network.requests).toEqual([]);
  });
});
