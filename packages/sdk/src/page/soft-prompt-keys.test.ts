// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installFakeBrowser, type FakeBrowser } from '../testing/fake-browser';
import { heraldResponder, json, recordFetch, type FetchRecorder } from '../testing/fetch-recorder';
import { SITE_KEY } from '../testing/keys';
import { createHerald } from './herald';
import { DEFAULT_PROMPT_SETTINGS, type PromptSettings } from './prompt-settings';
import { DISMISSED_AT_KEY } from './prompt-timing';
import { startPrompt } from './prompts';
import type { PageSettings } from './script-settings';

// The native prompt waits for a real user activation: Escape is none (HTML).

const settings: PageSettings = { siteId: 'site_1', api: 'https://herald.example', vapidKey: SITE_KEY, ownWorker: null, prompt: 'auto' };

let browser: FakeBrowser;
let network: FetchRecorder;

beforeEach(() => {
  browser = installFakeBrowser();
  network = recordFetch();
  localStorage.clear();
  document.body.innerHTML = '<main><button id="buy">Buy</button></main>';
});

afterEach(() => {
  vi.useRealTimers();
  browser.uninstall();
  network.restore();
});

async function loadPage(prompt: Partial<PromptSettings>) {
  network.respondWith((request) =>
    new URL(request.url).pathname.endsWith('/prompt-settings')
      ? json(200, { success: true, data: { prompt: { ...DEFAULT_PROMPT_SETTINGS, ...prompt } } })
      : heraldResponder(request),
  );
  const instance = createHerald(settings);
  await instance.refreshed;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  startPrompt(instance, settings, () => undefined);
  return instance;
}

describe('the native prompt and the Escape key', () => {
  it('does not spend the native prompt on an Escape key press (not a user activation, HTML §user activation)', async () => {
    await loadPage({ type: 'native', delaySeconds: 0, dismissDays: 7 });
    await vi.advanceTimersByTimeAsync(0);
    // Escape is not activation-triggering, so the browser gives no gesture: dispatched outside userGesture().
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    await vi.advanceTimersByTimeAsync(50);
    // The visitor's next real click should get the browser prompt.
    browser.userGesture(() => document.getElementById('buy')!.click());
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    expect(localStorage.getItem(DISMISSED_AT_KEY)).toBeNull();
    // And nothing was reported shown before that click.
    expect(network.to('/prompt-events').length).toBeLessThanOrEqual(1);
  });
});
