// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installFakeBrowser, type FakeBrowser } from '../testing/fake-browser';
import { heraldResponder, json, recordFetch, type FetchRecorder } from '../testing/fetch-recorder';
import { SITE_KEY } from '../testing/keys';
import { createHerald, type HeraldInstance, type TestDeviceInfo } from './herald';
import type { PageSettings } from './script-settings';
import { offerTestDevice, takeTestDeviceCode } from './test-device-link';

// Issue 12 §3: the owner opens a test-device link (`?herald_test=CODE`) from
// Herald's setup checklist; the SDK asks for permission inside a click,
// subscribes, and claims the code, so Herald marks this browser a test device.

const settings: PageSettings = { siteId: 'site_1', api: 'https://herald.example', vapidKey: SITE_KEY, ownWorker: null, prompt: 'manual' };
const DEVICE: TestDeviceInfo = { subscriber_id: 'sub_1', name: 'Firefox on Linux', browser: 'Firefox', os: 'Linux' };

let browser: FakeBrowser;
let network: FetchRecorder;
const errors: Error[] = [];

beforeEach(() => {
  browser = installFakeBrowser();
  network = recordFetch((request) =>
    new URL(request.url).pathname.endsWith('/test-devices') ? json(200, { success: true, data: { device: DEVICE } }) : heraldResponder(request),
  );
  document.body.innerHTML = '<main><h1>Shop</h1></main>';
  errors.length = 0;
  history.replaceState(null, '', '/');
});

afterEach(() => {
  browser.uninstall();
  network.restore();
});

async function loadPage(): Promise<HeraldInstance> {
  const instance = createHerald(settings);
  await instance.refreshed;
  return instance;
}

function offer() {
  const root = document.querySelector('[data-herald-test-device]')?.shadowRoot;
  if (!root) return null;
  const buttons = [...root.querySelectorAll('button')];
  return { headline: root.querySelector('.h')?.textContent, text: root.querySelector('.x')?.textContent, buttons };
}

describe('a test-device link', () => {
  it('is read once and taken out of the address bar, keeping the page’s own query', () => {
    history.replaceState(null, '', '/sale?colour=blue&herald_test=Code_123#top');
    expect(takeTestDeviceCode()).toBe('Code_123');
    expect(location.pathname + location.search + location.hash).toBe('/sale?colour=blue#top');
    expect(takeTestDeviceCode()).toBeNull();
  });

  it('offers to make the browser a test device; the click subscribes, claims the code and says it worked', async () => {
    const instance = await loadPage();
    const events: unknown[] = [];
    window.addEventListener('herald:test-device', (event) => events.push((event as CustomEvent).detail), { once: true });
    offerTestDevice(instance, 'Code_123', (error) => errors.push(error));
    const shown = offer()!;
    expect(shown.headline).toBe('Make this browser a test device?');
    expect(shown.text).toMatch(/nobody else gets them/);
    expect(shown.buttons.map((b) => b.textContent)).toEqual(['Make test device', 'Cancel']);
    expect(browser.permissionRequests).toEqual([]);
    expect(network.requests).toEqual([]);

    browser.userGesture(() => shown.buttons[0]!.click());
    expect(browser.permissionRequests).toEqual([{ prompted: true }]);
    await vi.waitFor(() => expect(offer()?.headline).toBe('This browser is now a test device: Firefox on Linux. Use “Send test” in Herald to reach it.'));
    expect(network.requests.map((request) => new URL(request.url).pathname)).toEqual(['/api/public/sites/site_1/subscribers', '/api/public/sites/site_1/test-devices']);
    expect(network.to('/test-devices')[0]?.body).toEqual({ endpoint: 'https://push.example/send/1', code: 'Code_123' });
    expect(events).toEqual([{ device: DEVICE }]);
    expect(offer()?.buttons.map((b) => b.textContent)).toEqual(['Close']);
    offer()!.buttons[0]!.click();
    expect(offer()).toBeNull();
    expect(errors).toEqual([]);
  });

  it('says why when Herald refuses the code (used or expired)', async () => {
    network.respondWith((request) =>
      new URL(request.url).pathname.endsWith('/test-devices')
        ? json(410, { success: false, error: { message: 'This test-device link was used already. Create a new one in Herald’s setup checklist.' } })
        : heraldResponder(request),
    );
    offerTestDevice(await loadPage(), 'Used_code', (error) => errors.push(error));
    browser.userGesture(() => offer()!.buttons[0]!.click());
    await vi.waitFor(() =>
      expect(offer()?.headline).toBe('This browser could not become a test device: This test-device link was used already. Create a new one in Herald’s setup checklist.'),
    );
    expect(errors).toHaveLength(1);
  });

  it('says how to unblock notifications when they are blocked, and sends nothing', async () => {
    browser.push.permission = 'denied';
    offerTestDevice(await loadPage(), 'Code_123', (error) => errors.push(error));
    browser.userGesture(() => offer()!.buttons[0]!.click());
    await vi.waitFor(() => expect(offer()?.headline).toBe('Notifications are blocked for this site. Allow them in the browser’s site settings, then try again.'));
    expect(network.requests).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('goes away on Cancel without asking anything', async () => {
    offerTestDevice(await loadPage(), 'Code_123', (error) => errors.push(error));
    offer()!.buttons[1]!.click();
    expect(offer()).toBeNull();
    expect(browser.permissionRequests).toEqual([]);
    expect(network.requests).toEqual([]);
  });

  it('explains when the browser cannot receive push on this page (iOS outside a home-screen app)', async () => {
    browser.uninstall();
    offerTestDevice(await loadPage(), 'Code_123', (error) => errors.push(error));
    expect(offer()?.headline).toMatch(/^This browser cannot receive web push on this page\. On iPhone and iPad, add the site to the Home Screen/);
    expect(offer()?.buttons.map((b) => b.textContent)).toEqual(['Close']);
  });
});
