import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeBase64Url } from '../common/base64url';
import { readSubscriber, writeConfig, writeSubscriber } from '../common/store';
import type { FakePushSubscription } from '../testing/fake-push';
import {
  FakeExtendableEvent,
  FakeNotificationEvent,
  FakePushEvent,
  FakePushSubscriptionChangeEvent,
  FakeShownNotification,
  FakeWindowClient,
  FakeWorkerScope,
} from '../testing/fake-worker-scope';
import { recordFetch, type FetchRecorder } from '../testing/fetch-recorder';
import { OTHER_KEY, SITE_KEY } from '../testing/keys';
import { installHeraldWorker, parsePayload } from './handlers';

const API = 'https://herald.example';
const EVENTS_URL = `${API}/api/public/events`;
const HERALD_WORKER_URL = `https://shop.example/herald-sw.js?site=site_1&api=${encodeURIComponent(API)}&key=${SITE_KEY}`;

let network: FetchRecorder;

beforeEach(() => {
  globalThis.indexedDB = new IDBFactory();
  network = recordFetch();
});

afterEach(() => {
  network.restore();
  vi.restoreAllMocks();
});

function startWorker(scriptUrl = HERALD_WORKER_URL): FakeWorkerScope {
  const scope = new FakeWorkerScope(scriptUrl);
  installHeraldWorker(scope.asServiceWorkerScope());
  return scope;
}

const payload = {
  title: 'Spring sale',
  body: '20% off everything until Sunday',
  url: 'https://shop.example/sale',
  icon: 'https://shop.example/icon.png',
  image: 'https://shop.example/banner.jpg',
  tag: 'n_42',
  token: 'tok_abc',
  api: API,
  actions: [
    { action: 'shoes', title: 'Shoes', url: 'https://shop.example/sale/shoes' },
    { action: 'later', title: 'Later' },
  ],
};

describe('push', () => {
  it('shows the notification from the payload, then reports it delivered with its token', async () => {
    const scope = startWorker();
    network.respondWith(() => {
      // The beacon goes out only after the notification is on screen.
      expect(scope.shown.map((shown) => shown.title)).toEqual(['Spring sale']);
      return new Response(null, { status: 204 });
    });

    await scope.dispatch(new FakePushEvent(payload));

    expect(scope.shown).toHaveLength(1);
    expect(scope.shown[0]?.title).toBe('Spring sale');
    expect(scope.shown[0]?.options).toStrictEqual({
      body: '20% off everything until Sunday',
      icon: 'https://shop.example/icon.png',
      image: 'https://shop.example/banner.jpg',
      tag: 'n_42',
      data: {
        herald: 1,
        url: 'https://shop.example/sale',
        token: 'tok_abc',
        api: API,
        actionUrls: { shoes: 'https://shop.example/sale/shoes' },
      },
      actions: [
        { action: 'shoes', title: 'Shoes' },
        { action: 'later', title: 'Later' },
      ],
    });
    expect(network.requests.map((request) => [request.url, request.method, request.body])).toEqual([
      [EVENTS_URL, 'POST', { type: 'delivered', token: 'tok_abc' }],
    ]);
    expect(network.requests[0]?.init.credentials).toBe('omit');
  });

  it('keeps a notification on screen, and alerts again when it replaces one with its tag, when the payload asks', async () => {
    const scope = startWorker();
    network.respondWith(() => new Response(null, { status: 204 }));
    await scope.dispatch(new FakePushEvent({ ...payload, requireInteraction: true, renotify: true }));
    expect(scope.shown[0]?.options).toMatchObject({ requireInteraction: true, renotify: true, tag: 'n_42' });
    // Without a tag there is nothing to replace: renotify is left out (browsers throw on it).
    await scope.dispatch(new FakePushEvent({ ...payload, tag: undefined, renotify: true }));
    expect(scope.shown[1]?.options).not.toHaveProperty('renotify');
    expect(scope.shown[1]?.options).not.toHaveProperty('requireInteraction');
  });

  it('still completes when the delivered beacon cannot reach Herald', async () => {
    const scope = startWorker();
    network.respondWith(() => 'network-error');
    await expect(scope.dispatch(new FakePushEvent(payload))).resolves.toBeUndefined();
    expect(scope.shown).toHaveLength(1);
    expect(network.requests).toHaveLength(1);
  });

  it('shows a plain notification for every push it cannot read, so no push is silent (Safari revokes silent subscriptions)', async () => {
    const scope = startWorker();
    for (const bad of [undefined, 'not json', '42', 'null', JSON.stringify({ body: 'no title' }), JSON.stringify({ title: '' })]) {
      scope.shown.length = 0;
      await expect(scope.dispatch(new FakePushEvent(bad))).resolves.toBeUndefined();
      expect(scope.shown.map((shown) => [shown.title, shown.options]), String(bad)).toEqual([
        ['shop.example', { body: 'You have a new notification. Open the site to see it.', tag: 'herald-fallback', data: { herald: 1, url: 'https://shop.example/' } }],
      ]);
    }
    // No token: nothing is reported.
    expect(network.requests).toEqual([]);
    // Its click opens the site.
    await scope.dispatch(new FakeNotificationEvent(scope.shown[0]!));
    expect(scope.opened).toEqual(['https://shop.example/']);
  });

  it('imported into a site’s own worker, leaves the site’s own pushes to it but still shows Herald’s unreadable ones', async () => {
    const scope = startWorker('https://shop.example/sw.js');
    await scope.dispatch(new FakePushEvent({ body: 'the site’s own message', kind: 'chat' }));
    await scope.dispatch(new FakePushEvent('plain text of the site'));
    expect(scope.shown).toEqual([]);
    await scope.dispatch(new FakePushEvent({ title: '', tag: 'herald-n_42', token: 'tok_abc' }));
    expect(scope.shown.map((shown) => shown.options.tag)).toEqual(['herald-fallback']);
  });

  it('shows the text plainly when the browser refuses the notification’s options, still opening its URL and counting it', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const scope = startWorker();
    const show = scope.registration.showNotification;
    scope.registration.showNotification = async (title, options = {}) => {
      if (options.image) throw new TypeError('image could not be loaded');
      return show(title, options);
    };
    await scope.dispatch(new FakePushEvent(payload));
    expect(scope.shown.map((shown) => [shown.title, shown.options.body, shown.options.tag])).toEqual([['Spring sale', '20% off everything until Sunday', 'n_42']]);
    expect(scope.shown[0]?.options.data).toStrictEqual({ herald: 1, url: 'https://shop.example/sale', token: 'tok_abc', api: API });
    expect(network.requests.map((request) => request.url)).toEqual([`${API}/api/public/events`]);
  });

  it('falls back to the configured API when the payload names none, and skips malformed actions', async () => {
    await writeConfig({ siteId: 'site_1', api: 'https://stored.example', vapidKey: SITE_KEY });
    const scope = startWorker('https://shop.example/sw.js');
    await scope.dispatch(new FakePushEvent({ title: 'Hi', token: 't1', url: 'https://shop.example/', actions: [{ title: 'no id' }, 'x'] }));
    expect(scope.shown[0]?.options).toStrictEqual({
      body: '',
      data: { herald: 1, url: 'https://shop.example/', token: 't1', api: 'https://stored.example' },
    });
    expect(network.requests.map((request) => request.url)).toEqual(['https://stored.example/api/public/events']);
  });

  it('is handled once even when the worker is imported twice', async () => {
    const scope = startWorker();
    installHeraldWorker(scope.asServiceWorkerScope());
    await scope.dispatch(new FakePushEvent(payload));
    expect(network.requests).toHaveLength(1);
  });
});

describe('notificationclick', () => {
  async function shownNotification(scope: FakeWorkerScope): Promise<FakeShownNotification> {
    await scope.dispatch(new FakePushEvent(payload));
    network.requests.length = 0;
    const [shown] = scope.shown;
    if (!shown) throw new Error('nothing shown');
    return shown;
  }

  it('closes the notification, opens its URL and reports the click', async () => {
    const scope = startWorker();
    const notification = await shownNotification(scope);
    await scope.dispatch(new FakeNotificationEvent(notification));
    expect(notification.closed).toBe(true);
    expect(scope.opened).toEqual(['https://shop.example/sale']);
    expect(network.requests.map((request) => [request.url, request.body])).toEqual([[EVENTS_URL, { type: 'clicked', token: 'tok_abc' }]]);
  });

  it('focuses a window already showing the URL instead of opening another', async () => {
    const scope = startWorker();
    const notification = await shownNotification(scope);
    const other = new FakeWindowClient('https://shop.example/');
    const existing = new FakeWindowClient('https://shop.example/sale');
    scope.windows.push(other, existing);
    await scope.dispatch(new FakeNotificationEvent(notification));
    expect(existing.focused).toBe(true);
    expect(other.focused).toBe(false);
    expect(scope.opened).toEqual([]);
    expect(network.requests).toHaveLength(1);
  });

  it('opens the clicked action’s URL, or the notification’s when the action has none', async () => {
    const scope = startWorker();
    await scope.dispatch(new FakeNotificationEvent(await shownNotification(scope), 'shoes'));
    await scope.dispatch(new FakeNotificationEvent(await shownNotification(scope), 'later'));
    expect(scope.opened).toEqual(['https://shop.example/sale/shoes', 'https://shop.example/sale']);
  });

  it('never opens a non-http URL but still reports the click', async () => {
    const scope = startWorker();
    const notification = new FakeShownNotification(
      'x',
      { data: { herald: 1, url: 'javascript:alert(1)', token: 'tok_js', api: API } },
      scope.shown,
    );
    await scope.dispatch(new FakeNotificationEvent(notification));
    expect(scope.opened).toEqual([]);
    expect(network.requests.map((request) => request.body)).toEqual([{ type: 'clicked', token: 'tok_js' }]);
  });

  it('reports the click even when the browser refuses to open a window', async () => {
    const scope = startWorker();
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    scope.clients.openWindow = async () => {
      throw new TypeError('Not allowed to open a window.');
    };
    await scope.dispatch(new FakeNotificationEvent(await shownNotification(scope)));
    expect(network.requests.map((request) => request.body)).toEqual([{ type: 'clicked', token: 'tok_abc' }]);
  });

  it('leaves notifications it did not show to the site’s own worker', async () => {
    const scope = startWorker();
    const theirs = new FakeShownNotification('Theirs', { data: { url: 'https://shop.example/' } }, scope.shown);
    const event = new FakeNotificationEvent(theirs);
    await scope.dispatch(event);
    expect(theirs.closed).toBe(false);
    expect(event.lifetime).toEqual([]);
    expect(scope.opened).toEqual([]);
    expect(network.requests).toEqual([]);
  });
});

describe('pushsubscriptionchange', () => {
  function expiredSubscription(scope: FakeWorkerScope, key: string, endpoint = 'https://push.example/send/old'): FakePushSubscription {
    const old = scope.registration.pushManager.adopt(endpoint, decodeBase64Url(key).buffer);
    // The push service dropped it: the registration no longer has it.
    scope.registration.pushManager.current = null;
    return old;
  }

  it('subscribes again with the site’s primary key (the configured one), not a rotated-away key, and posts it with previous_endpoint', async () => {
    const scope = startWorker();
    // The old subscription was made with another key (since retired, say): the configured primary wins.
    const old = expiredSubscription(scope, OTHER_KEY);
    await scope.dispatch(new FakePushSubscriptionChangeEvent(old));

    const { pushManager } = scope.registration;
    expect(pushManager.subscribeCalls).toHaveLength(1);
    expect(pushManager.subscribeCalls[0]?.userVisibleOnly).toBe(true);
    expect([...new Uint8Array(pushManager.subscribeCalls[0]?.applicationServerKey as ArrayBuffer)]).toEqual([...decodeBase64Url(SITE_KEY)]);
    const renewed = pushManager.current;
    expect(network.requests.map((request) => [request.url, request.body])).toStrictEqual([
      [
        `${API}/api/public/sites/site_1/subscribers`,
        {
          subscription: renewed?.toJSON(),
          timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
          language: navigator.language,
          previous_endpoint: 'https://push.example/send/old',
          vapid_public_key: SITE_KEY,
        },
      ],
    ]);
    expect(await readSubscriber('site_1')).toMatchObject({ endpoint: renewed?.endpoint, subscriberId: 'sub_1' });
  });

  it('uses the configured key and the stored endpoint when the browser gives no old subscription', async () => {
    await writeSubscriber({ siteId: 'site_1', endpoint: 'https://push.example/send/stored', subscriberId: 'sub_1', postedAt: 0 });
    const scope = startWorker();
    await scope.dispatch(new FakePushSubscriptionChangeEvent(null));
    const call = scope.registration.pushManager.subscribeCalls[0];
    expect([...new Uint8Array(call?.applicationServerKey as ArrayBuffer)]).toEqual([...decodeBase64Url(SITE_KEY)]);
    expect(network.requests.map((request) => request.body)).toEqual([
      expect.objectContaining({ previous_endpoint: 'https://push.example/send/stored' }),
    ]);
  });

  it('posts a new subscription the browser already made without subscribing again', async () => {
    const scope = startWorker();
    const old = expiredSubscription(scope, SITE_KEY);
    const fresh = scope.registration.pushManager.adopt('https://push.example/send/fresh', decodeBase64Url(SITE_KEY).buffer);
    await scope.dispatch(new FakePushSubscriptionChangeEvent(old, fresh));
    expect(scope.registration.pushManager.subscribeCalls).toEqual([]);
    expect(network.requests.map((request) => request.body)).toEqual([
      expect.objectContaining({ subscription: fresh.toJSON(), previous_endpoint: 'https://push.example/send/old' }),
    ]);
  });

  it('moves a subscription the browser renewed with a rotated-away key to the primary key', async () => {
    const scope = startWorker();
    const old = expiredSubscription(scope, OTHER_KEY);
    const renewedWithOldKey = scope.registration.pushManager.adopt('https://push.example/send/renewed-old-key', decodeBase64Url(OTHER_KEY).buffer);
    await scope.dispatch(new FakePushSubscriptionChangeEvent(old, renewedWithOldKey));
    const { pushManager } = scope.registration;
    expect(pushManager.subscribeCalls).toHaveLength(1);
    expect([...new Uint8Array(pushManager.subscribeCalls[0]?.applicationServerKey as ArrayBuffer)]).toEqual([...decodeBase64Url(SITE_KEY)]);
    expect(network.requests.map((request) => request.body)).toEqual([
      expect.objectContaining({ subscription: pushManager.current?.toJSON(), previous_endpoint: 'https://push.example/send/old', vapid_public_key: SITE_KEY }),
    ]);
  });

  it('keeps the old subscription’s key when no configuration exists yet', async () => {
    const scope = startWorker('https://shop.example/sw.js');
    const old = expiredSubscription(scope, OTHER_KEY);
    await scope.dispatch(new FakePushSubscriptionChangeEvent(old));
    expect([...new Uint8Array(scope.registration.pushManager.subscribeCalls[0]?.applicationServerKey as ArrayBuffer)]).toEqual([...decodeBase64Url(OTHER_KEY)]);
  });

  it('reads the configuration from IndexedDB in a site’s own worker (no query)', async () => {
    await writeConfig({ siteId: 'site_9', api: 'https://stored.example', vapidKey: SITE_KEY });
    const scope = startWorker('https://shop.example/sw.js');
    await scope.dispatch(new FakePushSubscriptionChangeEvent(null));
    expect(network.requests.map((request) => request.url)).toEqual(['https://stored.example/api/public/sites/site_9/subscribers']);
    expect(scope.registration.pushManager.current).not.toBeNull();
  });

  it('keeps the subscription alive without posting when no configuration exists yet', async () => {
    const scope = startWorker('https://shop.example/sw.js');
    const old = expiredSubscription(scope, SITE_KEY);
    await scope.dispatch(new FakePushSubscriptionChangeEvent(old));
    expect(scope.registration.pushManager.current?.endpoint).toBe('https://push.example/send/1');
    expect(network.requests).toEqual([]);
  });

  it('does not throw when Herald is unreachable', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    network.respondWith(() => 'network-error');
    const scope = startWorker();
    await expect(scope.dispatch(new FakePushSubscriptionChangeEvent(expiredSubscription(scope, SITE_KEY)))).resolves.toBeUndefined();
  });
});

describe('lifecycle', () => {
  it('takes over at once when Herald’s worker is the top-level script', async () => {
    const scope = startWorker();
    scope.dispatchEvent(new FakeExtendableEvent('install'));
    await scope.dispatch(new FakeExtendableEvent('activate'));
    expect(scope.skipWaitingCalls).toBe(1);
    expect(scope.claimCalls).toBe(1);
  });

  it('leaves the lifecycle alone when imported into a site’s own worker', async () => {
    const scope = startWorker('https://shop.example/sw.js');
    scope.dispatchEvent(new FakeExtendableEvent('install'));
    await scope.dispatch(new FakeExtendableEvent('activate'));
    expect(scope.skipWaitingCalls).toBe(0);
    expect(scope.claimCalls).toBe(0);
  });
});

describe('parsePayload', () => {
  it('keeps the contract fields and drops the rest', () => {
    const data = { json: () => ({ ...payload, extra: true, icon: 5 }), text: () => '' } as unknown as PushMessageData;
    expect(parsePayload(data)).toEqual({
      title: 'Spring sale',
      body: '20% off everything until Sunday',
      url: 'https://shop.example/sale',
      icon: undefined,
      image: 'https://shop.example/banner.jpg',
      tag: 'n_42',
      token: 'tok_abc',
      api: API,
      actions: [
        { action: 'shoes', title: 'Shoes', url: 'https://shop.example/sale/shoes' },
        { action: 'later', title: 'Later', url: undefined },
      ],
      requireInteraction: false,
      renotify: false,
    });
  });
});
