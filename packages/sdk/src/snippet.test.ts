// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HeraldApi } from './page/herald';
import { readConfig } from './common/store';
import { installFakeBrowser, type FakeBrowser } from './testing/fake-browser';
import { recordFetch, type FetchRecorder } from './testing/fetch-recorder';
import { SITE_KEY } from './testing/keys';

let browser: FakeBrowser;
let network: FetchRecorder;

beforeEach(() => {
  browser = installFakeBrowser();
  network = recordFetch();
  localStorage.clear();
  document.body.innerHTML = '';
  delete window.herald;
  vi.resetModules();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  browser.uninstall();
  network.restore();
});

function addScript(attributes: Record<string, string>): void {
  const script = document.createElement('script');
  for (const [name, value] of Object.entries(attributes)) script.setAttribute(name, value);
  document.body.append(script);
}

/** Runs the bundle's entry the way a browser runs the script tag, and waits for herald:ready. */
async function runSnippet(): Promise<HeraldApi | undefined> {
  const ready: HeraldApi[] = [];
  const listener = (event: Event) => ready.push((event as CustomEvent<HeraldApi>).detail);
  window.addEventListener('herald:ready', listener);
  await import('./snippet');
  window.removeEventListener('herald:ready', listener);
  expect(ready).toEqual(window.herald ? [window.herald] : []);
  return ready[0];
}

const installCode = { src: 'https://push.example.com/sdk/herald.js', 'data-site-id': 'site_1', 'data-vapid-key': SITE_KEY, async: '' };

describe('the page script', () => {
  it('exposes window.herald, fires herald:ready and stores the configuration for the worker', async () => {
    addScript(installCode);
    const herald = await runSnippet();
    expect(Object.keys(herald ?? {}).sort()).toEqual(
      ['addTags', 'identify', 'isSubscribed', 'permission', 'removeTags', 'subscribe', 'track', 'unsubscribe'].sort(),
    );
    await vi.waitFor(async () => expect(await readConfig()).toEqual({ siteId: 'site_1', api: 'https://push.example.com', vapidKey: SITE_KEY }));
    expect(browser.permissionRequests).toEqual([]);
  });

  it('talks to the API origin from data-api and registers the worker named by data-worker', async () => {
    addScript({ ...installCode, 'data-api': 'https://api.push.example.com/', 'data-worker': '/sw.js', 'data-prompt': 'manual' });
    const herald = await runSnippet();
    await browser.userGesture(() => herald?.subscribe());
    expect(network.requests.map((request) => request.url)).toEqual(['https://api.push.example.com/api/public/sites/site_1/subscribers']);
    expect(browser.serviceWorker.registerCalls.map((call) => call.scriptURL)).toEqual(['/sw.js']);
  });

  it('shows the soft prompt only with data-prompt="auto" (the default)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    addScript(installCode);
    await runSnippet();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(document.querySelector('[data-herald-prompt]')).not.toBeNull();
    // The owner's choice comes from Herald with the snippet's configuration.
    expect(network.to('/prompt-settings').map((request) => request.url)).toEqual(['https://push.example.com/api/public/sites/site_1/prompt-settings']);
  });

  it('shows no prompt with data-prompt="manual"', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    addScript({ ...installCode, 'data-prompt': 'manual' });
    await runSnippet();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(document.querySelector('[data-herald-prompt]')).toBeNull();
  });

  it('opened from a test-device link, offers to make the browser a test device instead of the prompt, also with data-prompt="manual"', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    history.replaceState(null, '', '/?herald_test=Code_123');
    addScript({ ...installCode, 'data-prompt': 'manual' });
    await runSnippet();
    expect(location.search).toBe('');
    expect(document.querySelector('[data-herald-test-device]')).not.toBeNull();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(document.querySelector('[data-herald-prompt]')).toBeNull();
    expect(network.to('/prompt-settings')).toEqual([]);
    history.replaceState(null, '', '/');
  });

  it('explains a broken script tag on the console and exposes nothing', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    addScript({ src: 'https://push.example.com/sdk/herald.js', 'data-site-id': 'site_1', 'data-vapid-key': 'not-a-key' });
    expect(await runSnippet()).toBeUndefined();
    expect(logged).toHaveBeenCalledWith('Herald: data-vapid-key is not a VAPID public key.');
  });

  it('does nothing harmful where push is unsupported', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    browser.uninstall();
    addScript(installCode);
    const herald = await runSnippet();
    expect(herald?.permission()).toBe('unsupported');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(document.querySelector('[data-herald-prompt]')).toBeNull();
    expect(network.requests).toEqual([]);
  });
});
