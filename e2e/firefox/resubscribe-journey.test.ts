import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import webpush from 'web-push';
import { PushService } from '../../apps/server/test/support/push-service';
import { createTestCertificate } from '../../apps/server/test/support/test-certificate';
import { startCustomerSite, type CustomerSite } from '../support/customer-site';
import { launchFirefox, pushPreferences, waitForAlert, type FirefoxProcess } from '../support/firefox';
import { startHerald, type HeraldProcess } from '../support/herald-server';

// Two journeys of a real Firefox ESR whose notification permission is granted
// up front (pushPreferences: `permissions.default.desktop-notification` 1, as
// for a visitor who allowed a previous provider's script on the same site):
// 1. docs/product.md, Settings, "visitors who already allowed notifications":
//    Herald's snippet subscribes it on page load, with no prompt at all.
// 2. docs/product.md, Settings, "Herald's rule (VAPID keys)": after the owner
//    makes another key primary, a page view moves the browser to it, keeping
//    the subscriber; the old key is left with no subscriber and can be retired.
// One Herald, one push service and one Firefox; each journey has its own shop
// (another origin) and site.

const ADMIN = { email: 'owner@pebble-pine.example', password: 'owner-password-1' };
/** Every wait is bounded (and every step by the suite's timeout). */
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

let push: PushService;
let herald: HeraldProcess;
let firefox: FirefoxProcess | undefined;
let browser: Browser;
let token: string;
const shops: CustomerSite[] = [];

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

/** A shop with Herald installed exactly as the install code says, and its site in Herald. */
async function openShop(name: string): Promise<{ shop: CustomerSite; site: { id: string; vapid_public_key: string; settings: Record<string, unknown> } }> {
  const shop = await startCustomerSite();
  shops.push(shop);
  const { site } = await api('POST', '/sites', { name, url: shop.origin });
  shop.install(await api('GET', `/sites/${site.id}/install-code`));
  return { shop, site };
}

/** Sends a notification from the dashboard to the site; resolves once the push service accepted Herald's push to `channelID`. */
async function sendTo(siteId: string, shop: CustomerSite, channelID: string, title: string) {
  const pushes = () => push.messages.filter((m) => m.subscriptionId === channelID);
  const before = pushes().length;
  const { notification } = await api('POST', `/sites/${siteId}/notifications`, {
    type: 'ONE_TIME',
    title,
    message: 'Handmade, in small batches',
    destination_url: `${shop.origin}/`,
    icon_url: null,
    image_url: null,
    status: 'DRAFT',
  });
  await api('POST', `/notifications/${notification.id}/send`);
  const received = await until(`push for "${title}" accepted by the push service`, async () => pushes()[before]);
  return { id: notification.id as string, received };
}

async function openPage(consoleLines: string[]): Promise<Page> {
  const page = await browser.newPage();
  page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  return page;
}

const promptOnPage = (page: Page) => page.evaluate(() => document.querySelector('[data-herald-prompt], [data-herald-bell], [data-herald-test-device]') !== null);

beforeAll(async () => {
  push = await PushService.start({ tls: true, webSocket: true });
  herald = await startHerald({
    NODE_EXTRA_CA_CERTS: createTestCertificate().caFile,
    EXTRA_PUSH_ORIGINS: push.origin,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    ADMIN_NAME: 'Pia Pine',
  });
  const login = await fetch(`${herald.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  token = ((await login.json()) as any).data.token;
  firefox = await launchFirefox({ prefs: { ...pushPreferences(push.webSocketUrl), 'devtools.console.stdout.content': true }, systemAccess: true });
  // Firefox's push client starts in an idle task: a subscribe() before its hello may never settle.
  await push.browsers.waitForEvent('hello', () => true, STEP_MS);
  browser = await firefox.connect();
}, 90_000);

afterAll(async () => {
  await firefox?.close();
  await herald?.stop();
  herald?.cleanUp();
  for (const shop of shops) await shop.close();
  await push?.close();
}, 30_000);

describe('A Firefox whose permission is already granted is subscribed by the snippet without any prompt', { timeout: 45_000 }, () => {
  it('subscribes on page load with no prompt, and receives what Herald sends', async () => {
    const { shop, site } = await openShop('Pebble & Pine');
    // New sites re-subscribe such visitors; the prompt would show at once if the snippet meant to ask.
    expect(site.settings).toMatchObject({ resubscribeGranted: true, replaceForeignSubscription: false });
    await api('PUT', `/sites/${site.id}/prompt-settings`, { type: 'slide', delaySeconds: 0 });

    const consoleLines: string[] = [];
    const page = await openPage(consoleLines);
    await page.goto(`${shop.origin}/`, { timeout: STEP_MS });
    expect(await page.evaluate(() => Notification.permission)).toBe('granted');

    // Firefox registers a channel with the site's key without anyone clicking anything…
    const register = await push.browsers.waitForEvent('register', (event) => event.key === site.vapid_public_key && event.status === 200, STEP_MS);
    // …and Herald stores the subscriber.
    const { subscribers } = await until('Herald stores the subscriber', async () => {
      const data = await api('GET', `/sites/${site.id}/subscribers`);
      return data.subscribers.length > 0 ? data : undefined;
    });
    expect(subscribers).toEqual([expect.objectContaining({ browser: 'Firefox', is_active: true })]);
    expect(await page.evaluate(() => window.herald!.isSubscribed())).toBe(true);
    // The shop's own button was never clicked, and no prompt of Herald's is on the page (a second later either).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await promptOnPage(page)).toBe(false);
    expect(await page.$eval('#status', (element) => element.textContent)).toBe('ready');
    expect((await api('GET', `/sites/${site.id}`)).site.subscriber_count).toBe(1);

    // A notification from Herald arrives: Firefox decrypts it (ack 100) and shows it.
    const { id, received } = await sendTo(site.id, shop, register.channelID, 'Welcome back');
    await push.browsers.waitForDelivered(received.messageId!, STEP_MS);
    await waitForAlert(browser, 'Welcome back', STEP_MS);
    await until('delivered count 1', async () => (await api('GET', `/notifications/${id}/performance`)).delivered === 1);

    // A reload finds the subscription: no new channel, no new subscriber.
    await page.reload({ timeout: STEP_MS });
    expect(await page.evaluate(() => window.herald!.isSubscribed())).toBe(true);
    expect(push.browsers.events.filter((event) => event.type === 'register' && event.key === site.vapid_public_key)).toHaveLength(1);
    expect((await api('GET', `/sites/${site.id}/subscribers`)).subscribers).toHaveLength(1);
    expect(consoleLines.filter((line) => line.includes('Herald'))).toEqual([]);
    await page.close();
  });
});

describe('Rotation moves a real browser from the old key to the new one without a new subscriber row', { timeout: 45_000 }, () => {
  it('moves Firefox to key B on a page view, keeps the subscriber, lets key A be retired and delivers with B', async () => {
    const { shop, site } = await openShop('Linen & Loam');
    // This journey subscribes by the shop's button, as a visitor who was asked would.
    await api('PATCH', `/sites/${site.id}`, { settings: { resubscribeGranted: false } });
    const keyA = site.vapid_public_key;

    const consoleLines: string[] = [];
    const page = await openPage(consoleLines);
    await page.goto(`${shop.origin}/`, { timeout: STEP_MS });
    await page.waitForSelector('#subscribe:not([disabled])', { timeout: STEP_MS });
    await page.click('#subscribe');
    await page.waitForFunction(() => /^(subscribed|failed) /.test(document.getElementById('status')?.textContent ?? ''), { timeout: STEP_MS });
    const status = await page.$eval('#status', (element) => element.textContent ?? '');
    expect(status, consoleLines.join('\n')).toMatch(/^subscribed /);
    const subscriberId = status.slice('subscribed '.length);
    const channelA = (await push.browsers.waitForEvent('register', (event) => event.key === keyA && event.status === 200, STEP_MS)).channelID;

    // The owner imports key B and makes it primary; the install code now carries B.
    const generated = webpush.generateVAPIDKeys();
    const { key: keyB } = await api('POST', `/sites/${site.id}/vapid-keys`, { public_key: generated.publicKey, private_key: generated.privateKey });
    await api('POST', `/sites/${site.id}/vapid-keys/${keyB.id}/primary`);
    const install = await api('GET', `/sites/${site.id}/install-code`);
    expect(install.snippet).toContain(`data-vapid-key="${generated.publicKey}"`);
    shop.install(install);

    // A page view: the snippet's key is not the subscription's, so the SDK asks Herald and moves to B.
    // Herald's answer to the SDK may be cached for a minute (the first page view read it, with key A):
    // bypassing the browser's cache stands for that minute passing.
    await page.setCacheEnabled(false);
    await page.reload({ timeout: STEP_MS });
    const unregister = await push.browsers.waitForEvent('unregister', (event) => event.channelID === channelA, STEP_MS);
    expect(unregister.code).toBe(200);
    const registerB = await push.browsers.waitForEvent('register', (event) => event.key === generated.publicKey && event.status === 200, STEP_MS);
    expect(registerB.channelID).not.toBe(channelA);
    // The browser's subscription is made with B (once Firefox has stored the push service's answer).
    const browserKey = () =>
      page.evaluate(async () => {
        const registration = await navigator.serviceWorker.getRegistration('/');
        const subscription = await registration?.pushManager.getSubscription();
        const key = subscription?.options.applicationServerKey;
        return key ? btoa(String.fromCharCode(...new Uint8Array(key))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : null;
      });
    await until('the browser’s subscription made with key B', async () => (await browserKey()) === generated.publicKey);

    // Herald moved the same subscriber to B: A has none left, the site still one.
    const keys = await until('the subscriber counted under key B', async () => {
      const data = await api('GET', `/sites/${site.id}/vapid-keys`);
      const b = data.keys.find((key: { id: string }) => key.id === keyB.id);
      return b?.subscriber_count === 1 ? data.keys : undefined;
    });
    expect(keys).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ public_key: keyA, is_primary: false, subscriber_count: 0 }),
        expect.objectContaining({ id: keyB.id, is_primary: true, subscriber_count: 1 }),
      ]),
    );
    expect((await api('GET', `/sites/${site.id}/subscribers`)).subscribers).toEqual([expect.objectContaining({ id: subscriberId, is_active: true })]);
    expect((await api('GET', `/sites/${site.id}`)).site.subscriber_count).toBe(1);

    // Key A can be retired.
    const keyAId = keys.find((key: { public_key: string }) => key.public_key === keyA).id;
    expect(await api('DELETE', `/sites/${site.id}/vapid-keys/${keyAId}`)).toEqual({ retired: true });

    // A push signed with B arrives.
    const { id, received } = await sendTo(site.id, shop, registerB.channelID, 'New colours in stock');
    expect(received.vapidKey).toBe(generated.publicKey);
    await push.browsers.waitForDelivered(received.messageId!, STEP_MS);
    await waitForAlert(browser, 'New colours in stock', STEP_MS);
    await until('delivered count 1', async () => (await api('GET', `/notifications/${id}/performance`)).delivered === 1);
    expect(push.requests.filter((request) => request.status !== 201)).toEqual([]);
    expect(consoleLines.filter((line) => line.includes('Herald'))).toEqual([]);
    await page.close();
  });
});

declare global {
  interface Window {
    herald?: { isSubscribed(): Promise<boolean>; unsubscribe(): Promise<boolean> };
  }
}
