import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeBase64Url } from '../common/base64url';
import { writeConfig } from '../common/store';
import { FakeNotificationEvent, FakePushEvent, FakePushSubscriptionChangeEvent, FakeWorkerScope } from '../testing/fake-worker-scope';
import { recordFetch, type FetchRecorder } from '../testing/fetch-recorder';
import { OTHER_KEY, SITE_KEY } from '../testing/keys';
import { installHeraldWorker } from './handlers';

// The worker at its edges (docs/web-push.md; packages/sdk/README.md): a site's
// own push in its own worker is left to it; a push whose options the browser
// refuses still opens its URL and counts; pushsubscriptionchange renews with
// the primary key the page stored, not the one in the worker's URL.

const API = 'https://herald.example';
const EVENTS_URL = `${API}/api/public/events`;
/** What the page registers (page/service-worker.ts workerScriptUrl): the snippet's data-vapid-key in the query. */
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
  image: 'https://shop.example/banner.jpg',
  tag: 'herald-n_42',
  token: 'tok_abc',
  api: API,
};

describe('push in a site’s own worker', () => {
  it('leaves the site’s own {title, body} push (no token/api/herald- tag) to the site, as the README promises', async () => {
    // README "Using your own service worker": "Herald leaves pushes that are not its own
    // (JSON without token/api/a herald- tag) to the site's handler."
    const scope = startWorker('https://shop.example/sw.js');
    await scope.dispatch(new FakePushEvent({ title: 'New chat message', body: 'Anna: are you there?' }));
    // The site's own push handler shows this one; Herald showing it too doubles it.
    expect(scope.shown).toEqual([]);
  });
});

describe('a push whose options the browser refuses', () => {
  it('still opens the notification’s URL on click and reports it delivered and clicked', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const scope = startWorker();
    const show = scope.registration.showNotification;
    scope.registration.showNotification = async (title, options = {}) => {
      if (options.image) throw new TypeError('image could not be loaded');
      return show(title, options);
    };
    await scope.dispatch(new FakePushEvent(payload));
    expect(scope.shown.map((shown) => shown.title)).toEqual(['Spring sale']);
    // It was shown: "delivered" should be reported.
    expect(network.requests.map((request) => [request.url, request.body])).toEqual([[EVENTS_URL, { type: 'delivered', token: 'tok_abc' }]]);
    network.requests.length = 0;
    await scope.dispatch(new FakeNotificationEvent(scope.shown[0]!));
    expect(scope.opened).toEqual(['https://shop.example/sale']);
    expect(network.requests.map((request) => [request.url, request.body])).toEqual([[EVENTS_URL, { type: 'clicked', token: 'tok_abc' }]]);
  });
});

describe('pushsubscriptionchange after a key rotation, in Herald’s own worker', () => {
  it('renews with the primary key the page stored, not the snippet key frozen in the worker’s query', async () => {
    // The page moved this browser to the primary key (movedToPrimaryKey) and wrote it to IndexedDB;
    // the registered worker is still /herald-sw.js?…&key=<snippet key> (registerWorker always uses the snippet's settings).
    await writeConfig({ siteId: 'site_1', api: API, vapidKey: OTHER_KEY });
    const scope = startWorker();
    const old = scope.registration.pushManager.adopt('https://push.example/send/old', decodeBase64Url(OTHER_KEY).buffer);
    scope.registration.pushManager.current = null;

    await scope.dispatch(new FakePushSubscriptionChangeEvent(old));

    const call = scope.registration.pushManager.subscribeCalls[0];
    expect([...new Uint8Array(call?.applicationServerKey as ArrayBuffer)]).toEqual([...decodeBase64Url(OTHER_KEY)]);
    expect(network.requests.map((request) => (request.body as { vapid_public_key?: string }).vapid_public_key)).toEqual([OTHER_KEY]);
  });

  it('keeps a renewal the browser made with the primary key instead of moving it back to the snippet key', async () => {
    await writeConfig({ siteId: 'site_1', api: API, vapidKey: OTHER_KEY });
    const scope = startWorker();
    const old = scope.registration.pushManager.adopt('https://push.example/send/old', decodeBase64Url(OTHER_KEY).buffer);
    scope.registration.pushManager.current = null;
    const fresh = scope.registration.pushManager.adopt('https://push.example/send/fresh', decodeBase64Url(OTHER_KEY).buffer);

    await scope.dispatch(new FakePushSubscriptionChangeEvent(old, fresh));

    expect(fresh.unsubscribed).toBe(false);
    expect(scope.registration.pushManager.subscribeCalls).toEqual([]);
  });
});
