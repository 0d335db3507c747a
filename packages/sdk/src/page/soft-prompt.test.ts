// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installFakeBrowser, type FakeBrowser } from '../testing/fake-browser';
import { recordFetch, type FetchRecorder } from '../testing/fetch-recorder';
import { SITE_KEY } from '../testing/keys';
import { createHerald, type HeraldApi } from './herald';
import type { PageSettings } from './script-settings';
import { DISMISS_FOR_MS, DISMISSED_AT_KEY, PROMPT_DELAY_MS, schedulePrompt, shouldShowPrompt, showPrompt } from './soft-prompt';

const settings: PageSettings = { siteId: 'site_1', api: 'https://herald.example', vapidKey: SITE_KEY, ownWorker: null, prompt: 'auto' };

let browser: FakeBrowser;
let network: FetchRecorder;
let herald: HeraldApi;
const errors: Error[] = [];

beforeEach(async () => {
  browser = installFakeBrowser();
  network = recordFetch();
  localStorage.clear();
  document.body.innerHTML = '<main><h1>Shop</h1><button>Buy</button></main>';
  errors.length = 0;
  const instance = createHerald(settings);
  await instance.refreshed;
  herald = instance.herald;
});

afterEach(() => {
  vi.useRealTimers();
  browser.uninstall();
  network.restore();
});

function banner() {
  const host = document.querySelector('[data-herald-prompt]');
  const root = host?.shadowRoot;
  if (!host || !root) return null;
  const buttons = [...root.querySelectorAll('button')];
  return {
    host,
    dialog: root.querySelector('[role="dialog"]'),
    text: root.querySelector('p')?.textContent,
    allow: buttons.find((button) => button.textContent === 'Allow'),
    notNow: buttons.find((button) => button.textContent === 'Not now'),
  };
}

describe('soft prompt', () => {
  it('appears after a short delay, without asking the browser for permission', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    schedulePrompt(herald, (error) => errors.push(error));
    await vi.advanceTimersByTimeAsync(PROMPT_DELAY_MS - 1);
    expect(banner()).toBeNull();
    await vi.advanceTimersByTimeAsync(1);

    const shown = banner();
    expect(shown?.text).toBe(`Get notifications from ${location.hostname}?`);
    expect(shown?.dialog?.getAttribute('aria-labelledby')).toBe('herald-prompt-text');
    expect(shown?.allow?.type).toBe('button');
    expect(shown?.notNow?.type).toBe('button');
    // First in <body> so keyboard users reach it first, but it does not take focus.
    expect(document.body.firstElementChild).toBe(shown?.host);
    expect(document.activeElement).toBe(document.body);
    expect(browser.permissionRequests).toEqual([]);
  });

  it('keeps its markup and styles inside a shadow root', () => {
    showPrompt(herald, (error) => errors.push(error));
    // The page's own queries and styles do not reach the banner's buttons.
    expect([...document.querySelectorAll('button')].map((button) => button.textContent)).toEqual(['Buy']);
    expect(banner()?.host.shadowRoot?.textContent).toContain('Allow');
  });

  it('is not shown once permission has been answered', () => {
    browser.push.permission = 'granted';
    expect(shouldShowPrompt(herald)).toBe(false);
    browser.push.permission = 'denied';
    expect(shouldShowPrompt(herald)).toBe(false);
    browser.push.permission = 'default';
    expect(shouldShowPrompt(herald)).toBe(true);
  });

  it('is not scheduled to show when permission is already granted', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    browser.push.permission = 'granted';
    schedulePrompt(herald, (error) => errors.push(error));
    await vi.advanceTimersByTimeAsync(PROMPT_DELAY_MS * 2);
    expect(banner()).toBeNull();
  });

  it('remembers "Not now" for seven days', () => {
    showPrompt(herald, (error) => errors.push(error));
    banner()?.notNow?.click();

    expect(banner()).toBeNull();
    const dismissedAt = Number(localStorage.getItem(DISMISSED_AT_KEY));
    expect(Math.abs(dismissedAt - Date.now())).toBeLessThan(5000);
    expect(shouldShowPrompt(herald)).toBe(false);

    localStorage.setItem(DISMISSED_AT_KEY, String(Date.now() - DISMISS_FOR_MS + 60_000));
    expect(shouldShowPrompt(herald)).toBe(false);
    localStorage.setItem(DISMISSED_AT_KEY, String(Date.now() - DISMISS_FOR_MS - 1));
    expect(shouldShowPrompt(herald)).toBe(true);
    expect(browser.permissionRequests).toEqual([]);
    expect(network.requests).toEqual([]);
  });

  it('treats Escape as "Not now"', () => {
    showPrompt(herald, (error) => errors.push(error));
    banner()?.allow?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    expect(banner()).toBeNull();
    expect(localStorage.getItem(DISMISSED_AT_KEY)).not.toBeNull();
  });

  it('"Allow" subscribes inside the click', async () => {
    showPrompt(herald, (error) => errors.push(error));
    browser.userGesture(() => banner()?.allow?.click());

    expect(banner()).toBeNull();
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    await vi.waitFor(() => expect(network.to('/subscribers')).toHaveLength(1));
    await expect(herald.isSubscribed()).resolves.toBe(true);
    expect(errors).toEqual([]);
  });

  it('counts a closed native prompt as "Not now"', async () => {
    browser.answer = 'default';
    showPrompt(herald, (error) => errors.push(error));
    browser.userGesture(() => banner()?.allow?.click());
    await vi.waitFor(() => expect(localStorage.getItem(DISMISSED_AT_KEY)).not.toBeNull());
    expect(network.requests).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('hands other failures to the error callback', async () => {
    network.respondWith(() => 'network-error');
    showPrompt(herald, (error) => errors.push(error));
    browser.userGesture(() => banner()?.allow?.click());
    await vi.waitFor(() => expect(errors.map((error) => error.message)).toEqual(['Could not reach Herald at https://herald.example']));
  });
});
