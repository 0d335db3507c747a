import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { PushService } from '../../apps/server/test/support/push-service';
import { createTestCertificate } from '../../apps/server/test/support/test-certificate';
import { startCustomerSite, type CustomerSite } from '../support/customer-site';
import { clickAlert, launchFirefox, pushPreferences, waitForAlert, type FirefoxProcess } from '../support/firefox';
import { startHerald, type HeraldProcess } from '../support/herald-server';

// Issue 12 §3 in a real browser: the owner opens the setup checklist's
// test-device link in Firefox ESR; Herald's snippet on the shop's page offers
// "Make this browser a test device", subscribes Firefox (a real channel on the
// test push service's WebSocket face) and claims the link. "Send test" then
// reaches Firefox and nobody else, Firefox decrypts and shows it, and no
// figure moves: not the notification's, not another notification's, not the
// dashboard's, not even after the test is clicked.

const ADMIN = { email: 'owner@pebble-pine.example', password: 'owner-password-1' };
const STEP_MS = 15_000;

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = STEP_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a test-device link makes a real Firefox a test device, and Send test reaches it alone', { timeout: 40_000 }, () => {
  let push: PushService;
  let herald: HeraldProcess;
  let shop: CustomerSite;
  let firefox: FirefoxProcess | undefined;
  let browser: Browser;
  let page: Page;
  let token: string;
  let site: { id: string; vapid_public_key: string };
  let channelID: string;
  let visitorSubscriptionId: string;
  let sale: { id: string };
  let draft: { id: string };
  const consoleLines: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${herald.url}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as any;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  };

  /** Everything a test push must not change. */
  const figures = async () => ({
    sale: await api('GET', `/notifications/${sale.id}/performance`),
    saleNotification: (await api('GET', `/notifications/${sale.id}`)).notification,
    draft: await api('GET', `/notifications/${draft.id}/performance`),
    draftNotification: (await api('GET', `/notifications/${draft.id}`)).notification,
    dashboard: (await api('GET', `/sites/${site.id}/analytics/dashboard`)).metrics,
    engagement: await api('GET', `/sites/${site.id}/analytics/engagement`),
  });

  /** Clicks a button inside Herald's banner (a shadow root) as a person would: a trusted click. */
  const clickBannerButton = async (label: string) => {
    const button = await page.evaluateHandle((text) => {
      const root = document.querySelector('[data-herald-test-device]')?.shadowRoot;
      return [...(root?.querySelectorAll('button') ?? [])].find((b) => b.textContent === text) ?? null;
    }, label);
    const element = button.asElement();
    if (!element) throw new Error(`no "${label}" button in Herald's banner`);
    await (element as any).click();
  };
  const bannerHeadline = () => page.evaluate(() => document.querySelector('[data-herald-test-device]')?.shadowRoot?.querySelector('.h')?.textContent ?? null);

  beforeAll(async () => {
    push = await PushService.start({ tls: true, webSocket: true });
    herald = await startHerald({
      NODE_EXTRA_CA_CERTS: createTestCertificate().caFile,
      EXTRA_PUSH_ORIGINS: push.origin,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ADMIN_NAME: 'Pia Pine',
    });
    shop = await startCustomerSite();
    const login = await fetch(`${herald.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = ((await login.json()) as any).data.token;
    ({ site } = await api('POST', '/sites', { name: 'Pebble & Pine', url: `${shop.origin}/` }));
    // Firefox's permission is granted up front (a headless prompt cannot be answered): the link, not the page load, subscribes it here.
    await api('PATCH', `/sites/${site.id}`, { settings: { resubscribeGranted: false } });
    const install = await api('GET', `/sites/${site.id}/install-code`);
    shop.install({ snippet: install.installCode, serviceWorker: install.serviceWorker });
    // Another visitor, subscribed from the push service's HTTPS face: a test must never reach them.
    const visitor = push.createSubscription({ applicationServerKey: site.vapid_public_key });
    visitorSubscriptionId = visitor.id;
    const subscribed = await fetch(`${herald.url}/api/public/sites/${site.id}/subscribers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: shop.origin },
      body: JSON.stringify({ subscription: { endpoint: visitor.endpoint, keys: visitor.keys } }),
    });
    expect(subscribed.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await firefox?.close();
    await herald?.stop();
    herald?.cleanUp();
    await shop?.close();
    await push?.close();
  }, 30_000);

  it('opens the link in Firefox: the snippet subscribes it and Herald marks it a test device named after the browser', async () => {
    const { link } = await api('POST', `/sites/${site.id}/test-devices/link`);
    expect(link.url).toMatch(/\?herald_test=/);

    firefox = await launchFirefox({ prefs: { ...pushPreferences(push.webSocketUrl), 'devtools.console.stdout.content': true }, systemAccess: true });
    await push.browsers.waitForEvent('hello', () => true, STEP_MS);
    browser = await firefox.connect();
    page = await browser.newPage();
    page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
    await page.goto(link.url, { timeout: STEP_MS });

    await until('the test-device offer', async () => (await bannerHeadline()) === 'Make this browser a test device?');
    // The one-time code left the address bar at once.
    expect(new URL(page.url()).search).toBe('');
    await clickBannerButton('Make test device');
    const headline = await until('the banner’s answer', async () => {
      const text = await bannerHeadline();
      return text && text !== 'Setting up this browser…' ? text : undefined;
    });
    expect(headline, consoleLines.join('\n')).toBe('This browser is now a test device: Firefox on Linux. Use “Send test” in Herald to reach it.');

    const register = await push.browsers.waitForEvent('register', (event) => event.status === 200);
    expect(register.key).toBe(site.vapid_public_key);
    channelID = register.channelID;
    const { devices } = await api('GET', `/sites/${site.id}/test-devices`);
    expect(devices).toEqual([{ subscriber_id: expect.any(String), name: 'Firefox on Linux', browser: 'Firefox', os: 'Linux' }]);
    expect((await api('GET', `/sites/${site.id}/checklist`)).checklist).toMatchObject({ test_devices: 1, active_subscribers: 2, test_sent_at: null });
    // The link works once.
    const again = await fetch(`${herald.url}/api/public/sites/${site.id}/test-devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: 'https://example.invalid/', code: new URL(link.url).searchParams.get('herald_test') }),
    });
    expect(again.status).toBe(410);
  });

  it('sends a test of a draft to Firefox alone; it shows it, and no figure moves, even after a click', async () => {
    // A real send first, so there are figures to keep: both subscribers get it, Firefox reports it delivered.
    ({ notification: sale } = await api('POST', `/sites/${site.id}/notifications`, {
      type: 'ONE_TIME',
      title: 'Summer sale',
      message: 'Everything 20% off until Sunday',
      destination_url: `${shop.origin}/sale`,
      status: 'DRAFT',
    }));
    await api('POST', `/notifications/${sale.id}/send`);
    await until('the sale delivered to Firefox', async () => (await api('GET', `/notifications/${sale.id}/performance`)).delivered === 1);
    await waitForAlert(browser, 'Summer sale', STEP_MS);
    ({ notification: draft } = await api('POST', `/sites/${site.id}/notifications`, {
      type: 'ONE_TIME',
      title: 'Autumn preview',
      message: 'Our new collection, first look',
      destination_url: `${shop.origin}/sale`,
      status: 'DRAFT',
    }));
    const before = await figures();
    expect(before.sale).toMatchObject({ sent: 2, delivered: 1 });
    const pushesBefore = push.requests.length;
    const visitorPushesBefore = push.messages.filter((m) => m.subscriptionId === visitorSubscriptionId).length;

    const { test } = await api('POST', `/notifications/${draft.id}/test`);
    expect(test).toMatchObject({ devices: 1, sent: 1, failed: 0, results: [expect.objectContaining({ name: 'Firefox on Linux', outcome: 'sent' })] });

    // One push, to Firefox's channel; the other visitor got nothing.
    const newRequests = push.requests.slice(pushesBefore);
    expect(newRequests.map((request) => [request.subscriptionId, request.status])).toEqual([[channelID, 201]]);
    expect(push.messages.filter((m) => m.subscriptionId === visitorSubscriptionId)).toHaveLength(visitorPushesBefore);
    const received = push.messages.filter((m) => m.subscriptionId === channelID).at(-1)!;
    await push.browsers.waitForDelivered(received.messageId!, STEP_MS);

    // Firefox decrypted it (ack 100) and the worker showed it as a real one.
    const alert = await waitForAlert(browser, 'Autumn preview', STEP_MS);
    expect(alert).toMatchObject({ text: 'Our new collection, first look', clickable: true });
    const shown = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.getRegistration('/');
      return ((await registration?.getNotifications()) ?? []).map((n) => ({ title: n.title, tag: n.tag, data: n.data }));
    });
    expect(shown.find((n) => n.title === 'Autumn preview')).toEqual({
      title: 'Autumn preview',
      tag: expect.stringMatching(/^herald-test-/),
      data: expect.objectContaining({ herald: 1, url: `${shop.origin}/sale`, token: expect.stringMatching(/^t\./) }),
    });

    // The visitor clicks it: the destination opens, the clicked beacon goes out, and is counted nowhere.
    const opened = browser.waitForTarget((target) => target.url() === `${shop.origin}/sale`, { timeout: STEP_MS });
    await clickAlert(browser, alert);
    await opened;
    // Time for the delivered and clicked beacons to arrive and be answered.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await figures();
    expect(after).toEqual(before);
    expect(after.draftNotification.status).toBe('draft');
    expect(after.draft).toMatchObject({ sent: 0, delivered: 0, clicked: 0, failed: 0 });
    expect((await api('GET', `/sites/${site.id}/checklist`)).checklist.test_sent_at).toEqual(expect.any(String));

    expect(push.browsers.failures()).toEqual([]);
    expect(firefox!.output().split('\n').filter((line) => line.includes('Herald:'))).toEqual([]);
    expect(consoleLines.filter((line) => line.includes('Herald'))).toEqual([]);
  });
});
