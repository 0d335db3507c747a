// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeBase64Url } from '../common/base64url';
import { readSubscriber } from '../common/store';
import { installFakeBrowser, type FakeBrowser } from '../testing/fake-browser';
import { heraldResponder, json, recordFetch, type FetchRecorder } from '../testing/fetch-recorder';
import { OTHER_KEY, SITE_KEY } from '../testing/keys';
import { createHerald, FOREIGN_SUBSCRIPTION_WARNING, type HeraldInstance } from './herald';
import { DEFAULT_PROMPT_SETTINGS } from './prompt-settings';
import { startPrompt } from './prompts';
import type { PageSettings } from './script-settings';

// docs/product.md, Settings, "visitors who already allowed notifications":
// a browser whose permission is already granted (to the site's previous push
// provider, say) is subscribed on page load without any prompt when the site
// says so (resubscribe_granted); another provider's subscription on the same
// registration is replaced only with replace_foreign_subscription. A visitor
// who has not answered yet still gets the prompts; a blocked one gets nothing.

const API = 'https://herald.example';
const settings: PageSettings = { siteId: 'site_1', api: API, vapidKey: SITE_KEY, ownWorker: null, prompt: 'auto' };
const HERALD_WORKER_URL = `/herald-sw.js?site=site_1&api=${encodeURIComponent(API)}&key=${SITE_KEY}`;

let browser: FakeBrowser;
let network: FetchRecorder;
let warnings: string[];
let subscribedEvents: unknown[];
let errorEvents: string[];
const onSubscribed = (event: Event) => subscribedEvents.push((event as CustomEvent).detail);
const onError = (event: Event) => errorEvents.push((event as CustomEvent<{ error: Error }>).detail.error.message);

beforeEach(() => {
  browser = installFakeBrowser();
  network = recordFetch();
  localStorage.clear();
  document.body.innerHTML = '<main><h1>Shop</h1></main>';
  warnings = [];
  subscribedEvents = [];
  errorEvents = [];
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(' ')));
  window.addEventListener('herald:subscribed', onSubscribed);
  window.addEventListener('herald:error', onError);
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  window.removeEventListener('herald:subscribed', onSubscribed);
  window.removeEventListener('herald:error', onError);
  browser.uninstall();
  network.restore();
});

interface SiteAnswer {
  resubscribe_granted?: boolean;
  replace_foreign_subscription?: boolean;
  vapid_public_key?: string;
}

/** Herald's public settings for the SDK, and its usual answers to everything else. */
function serve(site: SiteAnswer | 'unreachable') {
  network.respondWith((request) => {
    if (new URL(request.url).pathname.endsWith('/prompt-settings')) {
      if (site === 'unreachable') return 'network-error';
      return json(200, { success: true, data: { prompt: { ...DEFAULT_PROMPT_SETTINGS, delaySeconds: 1 }, vapid_public_key: SITE_KEY, ...site } });
    }
    return heraldResponder(request);
  });
}

/** What the snippet does on a page load with data-prompt="auto": the refresh, then the prompts (their delay run out on fake timers). */
async function loadPage(pageSettings: PageSettings = settings): Promise<HeraldInstance> {
  const instance = createHerald(pageSettings);
  await instance.refreshed;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  startPrompt(instance, pageSettings, () => undefined);
  await vi.advanceTimersByTimeAsync(5_000);
  vi.useRealTimers();
  return instance;
}

const promptShown = () => document.querySelector('[data-herald-prompt], [data-herald-bell]') !== null;
const paths = () => network.requests.map((request) => `${request.method} ${new URL(request.url).pathname}`);
const subscribeBodies = () => network.to('/subscribers').map((request) => request.body as Record<string, unknown>);
const keyOf = (subscription: { options: { applicationServerKey: ArrayBuffer | null } } | null | undefined) =>
  subscription?.options.applicationServerKey ? [...new Uint8Array(subscription.options.applicationServerKey)] : null;

function rootRegistration() {
  const registration = browser.serviceWorker.registrations.get(new URL('/', location.href).href);
  if (!registration) throw new Error('no root registration');
  return registration;
}

describe('a visitor whose permission is already granted', () => {
  beforeEach(() => {
    browser.push.permission = 'granted';
  });

  it('is subscribed on page load with the site’s primary key, without any prompt, when the site says so', async () => {
    // The owner rotated keys: Herald names OTHER_KEY as primary while the snippet still carries SITE_KEY.
    serve({ resubscribe_granted: true, vapid_public_key: OTHER_KEY });
    const { herald } = await loadPage();

    expect(promptShown()).toBe(false);
    expect(browser.permissionRequests).toEqual([]);
    expect(network.to('/prompt-events')).toEqual([]);
    expect(browser.serviceWorker.registerCalls).toEqual([{ scriptURL: HERALD_WORKER_URL, options: { scope: '/', updateViaCache: 'none' } }]);
    const { pushManager } = rootRegistration();
    expect(pushManager.subscribeCalls).toHaveLength(1);
    expect(keyOf(pushManager.current)).toEqual([...decodeBase64Url(OTHER_KEY)]);
    expect(subscribeBodies()).toEqual([
      {
        subscription: expect.objectContaining({ endpoint: 'https://push.example/send/1' }),
        timezone: expect.any(String),
        language: navigator.language,
        vapid_public_key: OTHER_KEY,
      },
    ]);
    expect(subscribedEvents).toEqual([{ id: 'sub_1' }]);
    expect(await readSubscriber('site_1')).toMatchObject({ endpoint: 'https://push.example/send/1', subscriberId: 'sub_1' });
    expect(await herald.isSubscribed()).toBe(true);
    expect(warnings).toEqual([]);

    // The next page view knows the subscription: nothing is subscribed or posted again.
    network.requests.length = 0;
    await loadPage();
    expect(pushManager.subscribeCalls).toHaveLength(1);
    expect(subscribeBodies()).toEqual([]);
  });

  it('is left alone when the site turned the setting off: no worker, no subscription, no prompt', async () => {
    serve({ resubscribe_granted: false });
    const { herald } = await loadPage();
    expect(paths()).toEqual(['GET /api/public/sites/site_1/prompt-settings']);
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(browser.serviceWorker.registrations.size).toBe(0);
    expect(promptShown()).toBe(false);
    expect(await herald.isSubscribed()).toBe(false);
  });

  it('is left alone while Herald cannot be reached (the owner’s choice is unknown)', async () => {
    serve('unreachable');
    await loadPage();
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(subscribeBodies()).toEqual([]);
    expect(errorEvents).toEqual([]);
  });

  it('is not subscribed again after unsubscribing with herald.unsubscribe()', async () => {
    serve({ resubscribe_granted: true });
    const { herald } = await loadPage();
    expect(await herald.unsubscribe()).toBe(true);
    network.requests.length = 0;

    await loadPage();
    expect(rootRegistration().pushManager.current).toBeNull();
    expect(subscribeBodies()).toEqual([]);

    // Subscribing again by a click lifts it.
    const later = await loadPage({ ...settings, prompt: 'manual' });
    await browser.userGesture(() => later.herald.subscribe());
    expect(subscribeBodies()).toHaveLength(1);
    rootRegistration().pushManager.current = null;
    await loadPage();
    expect(subscribeBodies()).toHaveLength(2);
  });

  describe('whose browser holds another provider’s subscription on the same registration', () => {
    /** The previous provider's worker at the root, now importing Herald's (data-worker), with its subscription made with another key. */
    async function previousProvider() {
      const registration = await browser.serviceWorker.preinstall('/sw.js');
      const foreign = registration.pushManager.adopt('https://push.other-provider.example/abc', decodeBase64Url(OTHER_KEY).buffer);
      return { registration, foreign };
    }
    const ownWorker: PageSettings = { ...settings, ownWorker: '/sw.js' };

    it('replaces it with Herald’s when the site allows it', async () => {
      const { registration, foreign } = await previousProvider();
      serve({ resubscribe_granted: true, replace_foreign_subscription: true });
      await loadPage(ownWorker);

      expect(foreign.unsubscribed).toBe(true);
      expect(keyOf(registration.pushManager.current)).toEqual([...decodeBase64Url(SITE_KEY)]);
      expect(registration.pushManager.current?.endpoint).toBe('https://push.example/send/1');
      // The other provider's endpoint is not Herald's to name: no previous_endpoint.
      expect(subscribeBodies()).toEqual([expect.not.objectContaining({ previous_endpoint: expect.anything() })]);
      expect(subscribeBodies()[0]).toMatchObject({ subscription: { endpoint: 'https://push.example/send/1' }, vapid_public_key: SITE_KEY });
      expect(subscribedEvents).toEqual([{ id: 'sub_1' }]);
      expect(promptShown()).toBe(false);
      expect(warnings).toEqual([]);
    });

    it('replaces nothing while that worker is not the one named by data-worker, and reports the install problem', async () => {
      const { registration, foreign } = await previousProvider();
      serve({ resubscribe_granted: true, replace_foreign_subscription: true });
      await loadPage();

      expect(browser.serviceWorker.registerCalls).toEqual([]);
      expect(foreign.unsubscribed).toBe(false);
      expect(registration.pushManager.current).toBe(foreign);
      expect(subscribeBodies()).toEqual([]);
      expect(errorEvents).toEqual([expect.stringContaining('Another service worker (/sw.js) controls this site')]);
    });

    it('leaves it and says why in one console warning when the site does not allow it', async () => {
      const { registration, foreign } = await previousProvider();
      serve({ resubscribe_granted: true, replace_foreign_subscription: false });
      const { herald } = await loadPage(ownWorker);

      expect(foreign.unsubscribed).toBe(false);
      expect(registration.pushManager.current).toBe(foreign);
      expect(registration.pushManager.subscribeCalls).toHaveLength(1);
      expect(subscribeBodies()).toEqual([]);
      expect(warnings).toEqual([FOREIGN_SUBSCRIPTION_WARNING]);
      expect(errorEvents).toEqual([]);
      expect(subscribedEvents).toEqual([]);
      expect(promptShown()).toBe(false);
      expect(await herald.isSubscribed()).toBe(false);
    });
  });
});

describe('a visitor who has not answered the permission yet', () => {
  it('gets the prompt as before, and is subscribed only from its click', async () => {
    serve({ resubscribe_granted: true, replace_foreign_subscription: true });
    const instance = createHerald(settings);
    await instance.refreshed;
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(network.requests).toEqual([]);

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    startPrompt(instance, settings, () => undefined);
    await vi.advanceTimersByTimeAsync(1_000);
    const root = document.querySelector('[data-herald-prompt]')?.shadowRoot;
    expect(root).toBeTruthy();
    expect(browser.permissionRequests).toEqual([]);
    expect(subscribeBodies()).toEqual([]);

    browser.userGesture(() => root!.querySelector('button')!.click());
    for (let step = 0; subscribeBodies().length === 0 && step < 500; step++) await vi.advanceTimersByTimeAsync(10);
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    expect(subscribeBodies()).toEqual([expect.objectContaining({ prompt: 'slide' })]);
  });
});

describe('a visitor who blocked notifications', () => {
  it('gets nothing: no request, no worker, no prompt', async () => {
    browser.push.permission = 'denied';
    serve({ resubscribe_granted: true, replace_foreign_subscription: true });
    await loadPage();
    expect(network.requests).toEqual([]);
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(browser.permissionRequests).toEqual([]);
    expect(promptShown()).toBe(false);
  });
});
