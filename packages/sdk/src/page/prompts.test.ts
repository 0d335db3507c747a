// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installFakeBrowser, type FakeBrowser } from '../testing/fake-browser';
import { heraldResponder, json, recordFetch, type FetchRecorder } from '../testing/fetch-recorder';
import { SITE_KEY } from '../testing/keys';
import { createHerald, type HeraldInstance } from './herald';
import { DEFAULT_PROMPT_SETTINGS, type PromptSettings } from './prompt-settings';
import { DAY_MS, DISMISSED_AT_KEY, PAGE_VIEWS_KEY } from './prompt-timing';
import { startPrompt } from './prompts';
import type { PageSettings } from './script-settings';

// Issue 12 §4: each prompt type the owner can choose (slide, native, bell)
// and its timing rules (after N seconds, from the Nth page view, not for N
// days after "later"), with the SDK's reports of prompts shown and of the
// prompt that led to a subscription.

const settings: PageSettings = { siteId: 'site_1', api: 'https://herald.example', vapidKey: SITE_KEY, ownWorker: null, prompt: 'auto' };

let browser: FakeBrowser;
let network: FetchRecorder;
const errors: Error[] = [];

beforeEach(() => {
  browser = installFakeBrowser();
  network = recordFetch();
  localStorage.clear();
  document.body.innerHTML = '<main><h1>Shop</h1><button id="buy">Buy</button></main>';
  errors.length = 0;
});

afterEach(() => {
  vi.useRealTimers();
  browser.uninstall();
  network.restore();
});

/** Herald answers the prompt settings with these (over the defaults), and everything else as usual. */
function serveSettings(prompt: Partial<PromptSettings> | 'unreachable') {
  network.respondWith((request) => {
    if (new URL(request.url).pathname.endsWith('/prompt-settings')) {
      return prompt === 'unreachable' ? 'network-error' : json(200, { success: true, data: { prompt: { ...DEFAULT_PROMPT_SETTINGS, ...prompt } } });
    }
    return heraldResponder(request);
  });
}

/** A page load with data-prompt="auto"; timers are fake from here on (the page-load refresh ran on real ones). */
async function loadPage(prompt: Partial<PromptSettings> | 'unreachable' = {}): Promise<HeraldInstance> {
  serveSettings(prompt);
  const instance = createHerald(settings);
  await instance.refreshed;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  startPrompt(instance, settings, (error) => errors.push(error));
  return instance;
}

function banner() {
  const host = document.querySelector('[data-herald-prompt]');
  const root = host?.shadowRoot;
  if (!host || !root) return null;
  const buttons = [...root.querySelectorAll('button')];
  const dialog = root.querySelector<HTMLElement>('[role="dialog"]');
  return {
    host,
    dialog,
    headline: root.querySelector('.h')?.textContent,
    text: root.querySelector('.x')?.textContent ?? null,
    accept: buttons[0],
    later: buttons[1],
  };
}

function bell() {
  return document.querySelector('[data-herald-bell]')?.shadowRoot?.querySelector('button') ?? null;
}

const shownReports = () => network.to('/prompt-events').map((request) => request.body);
const subscribeBodies = () => network.to('/subscribers').map((request) => request.body as Record<string, unknown>);

async function realTimersAgain() {
  vi.useRealTimers();
}

/** Runs the fake clock in small steps until the expectation holds (permission answers and worker installs are tasks). */
async function until(expectation: () => void): Promise<void> {
  for (let step = 0; ; step++) {
    try {
      expectation();
      return;
    } catch (error) {
      if (step > 500) throw error;
      await vi.advanceTimersByTimeAsync(10);
    }
  }
}

describe('the slide prompt', () => {
  it('appears after the configured delay with the owner’s texts, colours and position, without asking the browser', async () => {
    await loadPage({ delaySeconds: 12, headline: 'Never miss a sale', text: 'One message a week, no more.', acceptLabel: 'Yes please', laterLabel: 'Maybe later', position: 'top', backgroundColor: '#0f172a', textColor: '#f8fafc' });
    await vi.advanceTimersByTimeAsync(11_999);
    expect(banner()).toBeNull();
    await vi.advanceTimersByTimeAsync(1);

    const shown = banner()!;
    expect(shown.headline).toBe('Never miss a sale');
    expect(shown.text).toBe('One message a week, no more.');
    expect(shown.accept?.textContent).toBe('Yes please');
    expect(shown.later?.textContent).toBe('Maybe later');
    expect(shown.dialog?.className).toBe('b top');
    expect(shown.dialog?.style.getPropertyValue('--bg')).toBe('#0f172a');
    expect(shown.dialog?.style.getPropertyValue('--fg')).toBe('#f8fafc');
    expect(shown.dialog?.getAttribute('aria-labelledby')).toBe(shown.host.shadowRoot?.querySelector('.h')?.id);
    // First in <body> for keyboard users, but it does not take focus; the page's own buttons are untouched.
    expect(document.body.firstElementChild).toBe(shown.host);
    expect(document.activeElement).toBe(document.body);
    expect([...document.querySelectorAll('button')].map((button) => button.textContent)).toEqual(['Buy']);
    expect(browser.permissionRequests).toEqual([]);
    expect(shownReports()).toEqual([{ prompt: 'slide', event: 'shown' }]);
    expect(network.to('/prompt-events')[0]?.headers['content-type']).toBe('text/plain');
  });

  it('asks “Get notifications from <host>?” without a headline, and uses the defaults when Herald cannot be reached', async () => {
    await loadPage('unreachable');
    await vi.advanceTimersByTimeAsync(DEFAULT_PROMPT_SETTINGS.delaySeconds * 1000);
    expect(banner()?.headline).toBe(`Get notifications from ${location.hostname}?`);
    expect(banner()?.accept?.textContent).toBe('Allow');
    expect(banner()?.later?.textContent).toBe('Not now');
    expect(banner()?.dialog?.className).toBe('b bottom');
  });

  it('subscribes inside the accept click and tells Herald the slide prompt brought the subscriber', async () => {
    const instance = await loadPage({ delaySeconds: 0 });
    await vi.advanceTimersByTimeAsync(0);
    browser.userGesture(() => banner()!.accept!.click());
    expect(banner()).toBeNull();
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    await until(() => expect(subscribeBodies()).toHaveLength(1));
    expect(subscribeBodies()[0]).toMatchObject({ prompt: 'slide' });
    await realTimersAgain();
    await expect(instance.herald.isSubscribed()).resolves.toBe(true);
    expect(errors).toEqual([]);
  });

  it('stays away for the configured days after “later” (or Escape), then asks again', async () => {
    await loadPage({ delaySeconds: 0, dismissDays: 3 });
    await vi.advanceTimersByTimeAsync(0);
    banner()!.later!.click();
    expect(banner()).toBeNull();
    const dismissedAt = Number(localStorage.getItem(DISMISSED_AT_KEY));
    expect(Math.abs(dismissedAt - Date.now())).toBeLessThan(5000);

    await realTimersAgain();
    await loadPage({ delaySeconds: 0, dismissDays: 3 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(banner()).toBeNull();

    await realTimersAgain();
    localStorage.setItem(DISMISSED_AT_KEY, String(Date.now() - 3 * DAY_MS - 1));
    await loadPage({ delaySeconds: 0, dismissDays: 3 });
    await vi.advanceTimersByTimeAsync(0);
    const again = banner()!;
    again.accept!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    expect(banner()).toBeNull();
    expect(Number(localStorage.getItem(DISMISSED_AT_KEY))).toBeGreaterThan(dismissedAt - 1);
    expect(browser.permissionRequests).toEqual([]);
    expect(subscribeBodies()).toEqual([]);
  });

  it('appears from the configured page view on', async () => {
    for (let view = 1; view <= 3; view++) {
      await realTimersAgain();
      document.body.innerHTML = '<main></main>';
      await loadPage({ pageViews: 3, delaySeconds: 1 });
      await vi.advanceTimersByTimeAsync(1000);
      expect(Boolean(banner()), `page view ${view}`).toBe(view === 3);
    }
    expect(localStorage.getItem(PAGE_VIEWS_KEY)).toBe('3');
    expect(shownReports()).toHaveLength(1);
  });

  it('counts a closed browser prompt as “later”, and hands other failures to the error callback', async () => {
    browser.answer = 'default';
    await loadPage({ delaySeconds: 0 });
    await vi.advanceTimersByTimeAsync(0);
    browser.userGesture(() => banner()!.accept!.click());
    await until(() => expect(localStorage.getItem(DISMISSED_AT_KEY)).not.toBeNull());
    expect(errors).toEqual([]);

    await realTimersAgain();
    localStorage.clear();
    browser.answer = 'granted';
    await loadPage({ delaySeconds: 0 });
    network.respondWith((request) => (new URL(request.url).pathname.endsWith('/subscribers') ? 'network-error' : heraldResponder(request)));
    await until(() => expect(banner()).not.toBeNull());
    browser.userGesture(() => banner()!.accept!.click());
    await until(() => expect(errors.map((error) => error.message)).toEqual(['Could not reach Herald at https://herald.example']));
  });

  it('is neither fetched nor shown once permission is answered', async () => {
    for (const permission of ['granted', 'denied'] as const) {
      await realTimersAgain();
      browser.push.permission = permission;
      await loadPage({ delaySeconds: 0 });
      await vi.advanceTimersByTimeAsync(10_000);
      expect(banner()).toBeNull();
    }
    // The prompt fetches nothing; only the granted page load asked once whether to subscribe such a visitor (this Herald names no setting: off).
    expect(network.to('/prompt-settings')).toHaveLength(1);
    expect(browser.serviceWorker.registerCalls).toEqual([]);
    expect(localStorage.getItem(PAGE_VIEWS_KEY)).toBeNull();
  });
});

describe('the native prompt', () => {
  it('asks at the visitor’s first click after the delay (a user gesture), once, and names the native prompt', async () => {
    const instance = await loadPage({ type: 'native', delaySeconds: 8 });
    await vi.advanceTimersByTimeAsync(7000);
    browser.userGesture(() => document.getElementById('buy')!.click());
    expect(browser.permissionRequests).toEqual([]);

    await vi.advanceTimersByTimeAsync(1000);
    expect(banner()).toBeNull();
    expect(browser.permissionRequests).toEqual([]);
    browser.userGesture(() => document.getElementById('buy')!.click());
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    browser.userGesture(() => document.getElementById('buy')!.click());
    expect(browser.permissionRequests).toHaveLength(1);

    await until(() => expect(subscribeBodies()).toHaveLength(1));
    expect(subscribeBodies()[0]).toMatchObject({ prompt: 'native' });
    expect(shownReports()).toEqual([{ prompt: 'native', event: 'shown' }]);
    await realTimersAgain();
    await expect(instance.herald.isSubscribed()).resolves.toBe(true);
  });

  it('remembers a closed browser prompt for the configured days', async () => {
    browser.answer = 'default';
    await loadPage({ type: 'native', delaySeconds: 0, dismissDays: 10 });
    await vi.advanceTimersByTimeAsync(0);
    browser.userGesture(() => document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })));
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    await until(() => expect(localStorage.getItem(DISMISSED_AT_KEY)).not.toBeNull());

    await realTimersAgain();
    await loadPage({ type: 'native', delaySeconds: 0, dismissDays: 10 });
    await vi.advanceTimersByTimeAsync(0);
    browser.userGesture(() => document.getElementById('buy')!.click());
    expect(browser.permissionRequests).toHaveLength(1);
  });
});

describe('the bell', () => {
  it('appears in a corner after the delay, in the owner’s colours; a click subscribes and it goes away', async () => {
    await loadPage({ type: 'bell', delaySeconds: 3, headline: 'Get our deals', buttonColor: '#aa3300', buttonTextColor: '#ffffff' });
    await vi.advanceTimersByTimeAsync(2999);
    expect(bell()).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    const button = bell()!;
    expect(button.getAttribute('aria-label')).toBe('Get our deals');
    expect(button.className).toBe('bottom');
    expect(button.style.getPropertyValue('--btn')).toBe('#aa3300');
    expect(banner()).toBeNull();
    expect(shownReports()).toEqual([{ prompt: 'bell', event: 'shown' }]);
    expect(browser.permissionRequests).toEqual([]);

    browser.userGesture(() => button.click());
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    await until(() => expect(bell()).toBeNull());
    expect(subscribeBodies()[0]).toMatchObject({ prompt: 'bell' });
  });

  it('goes away when the visitor blocks notifications, without an error', async () => {
    browser.answer = 'denied';
    await loadPage({ type: 'bell', delaySeconds: 0 });
    await vi.advanceTimersByTimeAsync(0);
    browser.userGesture(() => bell()!.click());
    await until(() => expect(bell()).toBeNull());
    expect(errors).toEqual([]);
    expect(subscribeBodies()).toEqual([]);
  });
});
