import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { PushService } from '../../apps/server/test/support/push-service';
import { createTestCertificate } from '../../apps/server/test/support/test-certificate';
import { startCustomerSite, type CustomerSite } from '../support/customer-site';
import { clickAlert, launchFirefox, pushPreferences, shownAlerts, waitForAlert, type FirefoxProcess } from '../support/firefox';
import { startHerald, type HeraldProcess } from '../support/herald-server';

// Issue 6 §4: the SDK, the RFC 8291 encryption and the RFC 8292 signature
// against a real browser. Firefox ESR subscribes through Herald's install code
// on a shop's page; Herald sends through a push service that checks VAPID;
// Firefox decrypts the body itself (ack 100 — a 101 would mean Herald's
// encryption is wrong) and Herald's service worker shows the notification,
// reports it delivered, and on a click opens the destination and reports the
// click. The steps share one browser and run in order.

const ADMIN = { email: 'owner@pebble-pine.example', password: 'owner-password-1' };
/** Every wait is bounded (and every step by the suite's 30 s); the whole journey takes about 12 s. */
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

describe('a real Firefox subscribes through Herald and receives its notifications', { timeout: 30_000 }, () => {
  let push: PushService;
  let herald: HeraldProcess;
  let shop: CustomerSite;
  let firefox: FirefoxProcess | undefined;
  let browser: Browser;
  let page: Page;
  let token: string;
  let site: { id: string; vapid_public_key: string };
  let channelID: string;
  let subscriberId: string;
  let saleNotificationId: string;
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

  /** Writes and sends a notification from the dashboard; returns its id. */
  const sendNotification = async (title: string, message: string, path: string): Promise<string> => {
    const { notification } = await api('POST', `/sites/${site.id}/notifications`, {
      type: 'ONE_TIME',
      title,
      message,
      destination_url: `${shop.origin}${path}`,
      icon_url: null,
      image_url: null,
      status: 'DRAFT',
    });
    await api('POST', `/notifications/${notification.id}/send`);
    return notification.id;
  };

  const performance = (notificationId: string) => api('GET', `/notifications/${notificationId}/performance`);

  /**
   * Sends a notification and returns the push Herald made for it once the push
   * service accepted it (the service cannot read a browser's pushes, so they are
   * matched by order: the steps send one at a time).
   */
  const sendAndAccept = async (title: string, message: string, path: string) => {
    const pushesToFirefox = () => push.messages.filter((m) => m.subscriptionId === channelID);
    const before = pushesToFirefox().length;
    const id = await sendNotification(title, message, path);
    const received = await until('push accepted by the push service', async () => pushesToFirefox()[before]);
    return { id, received };
  };

  beforeAll(async () => {
    // An HTTPS face for Herald, which trusts the test CA through NODE_EXTRA_CA_CERTS
    // (no TLS check switched off), and a ws:// face for Firefox.
    push = await PushService.start({ tls: true, webSocket: true });
    herald = await startHerald({
      NODE_EXTRA_CA_CERTS: createTestCertificate().caFile,
      EXTRA_PUSH_ORIGINS: push.origin,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ADMIN_NAME: 'Pia Pine',
    });
    shop = await startCustomerSite();
    const login = await fetch(`${herald.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    token = ((await login.json()) as any).data.token;
  }, 60_000);

  afterAll(async () => {
    await firefox?.close();
    await herald?.stop();
    herald?.cleanUp();
    await shop?.close();
    await push?.close();
  }, 30_000);

  it('subscribes from the shop’s button, with Herald installed exactly as the install code says', async () => {
    ({ site } = await api('POST', '/sites', { name: 'Pebble & Pine', url: shop.origin }));
    // Firefox's permission is granted up front (a headless prompt cannot be answered): this journey is the
    // visitor who subscribes by a click, so the snippet must not subscribe on page load (resubscribe-journey.test.ts does).
    await api('PATCH', `/sites/${site.id}`, { settings: { resubscribeGranted: false } });
    const install = await api('GET', `/sites/${site.id}/install-code`);
    expect(install.snippet).toContain(`${herald.url}/sdk/herald.js`);
    expect(install.serviceWorker.fileName).toBe('herald-sw.js');
    shop.install(install);

    // A fresh Firefox. Its push client is set up in an idle task after start, and a
    // subscribe() issued before its hello may never settle: open the page after hello.
    firefox = await launchFirefox({
      prefs: {
        ...pushPreferences(push.webSocketUrl),
        // Reconnect within a second after the push service drops the connection (default 5 s, doubling).
        'dom.push.retryBaseInterval': 500,
        'devtools.console.stdout.content': true,
      },
      systemAccess: true,
    });
    const hello = await push.browsers.waitForEvent('hello', () => true, STEP_MS);
    expect(hello).toMatchObject({ sentUaid: null, useWebpush: true });
    browser = await firefox.connect();
    page = await browser.newPage();
    page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
    await page.goto(`${shop.origin}/`, { timeout: STEP_MS });
    await page.waitForSelector('#subscribe:not([disabled])', { timeout: STEP_MS });

    // The visitor clicks the shop's button: a trusted click through WebDriver BiDi.
    await page.click('#subscribe');
    await page.waitForFunction(() => /^(subscribed|failed) /.test(document.getElementById('status')?.textContent ?? ''), { timeout: STEP_MS });
    const status = await page.$eval('#status', (element) => element.textContent ?? '');
    expect(status, consoleLines.join('\n')).toMatch(/^subscribed /);
    subscriberId = status.slice('subscribed '.length);
    expect(shop.requests).toContain('/herald-sw.js');

    // Firefox registered a channel with the site's VAPID key (it sends it padded; compared as bytes).
    const register = await push.browsers.waitForEvent('register', (event) => event.status === 200);
    expect(register.key).toBe(site.vapid_public_key);
    channelID = register.channelID;

    // Herald stored the subscriber and recognised the browser (dashboard API; this branch has no Subscribers page).
    const { subscribers } = await api('GET', `/sites/${site.id}/subscribers`);
    expect(subscribers).toEqual([expect.objectContaining({ id: subscriberId, browser: 'Firefox', os: 'Linux', is_active: true })]);
    expect(subscribers[0].metadata.user_agent).toMatch(/Gecko\/20100101 Firefox\/\d+/);

    // A later visit finds the subscription made with the site's key: no new channel, no new subscriber.
    await page.reload({ timeout: STEP_MS });
    await page.waitForSelector('#subscribe:not([disabled])', { timeout: STEP_MS });
    expect(await page.evaluate(() => window.herald!.isSubscribed())).toBe(true);
    expect(push.browsers.events.filter((event) => event.type === 'register' || event.type === 'unregister')).toHaveLength(1);
    expect((await api('GET', `/sites/${site.id}/subscribers`)).subscribers).toHaveLength(1);
  });

  it('receives a notification: Firefox decrypts it (ack 100), shows it and reports it delivered', async () => {
    const { id, received } = await sendAndAccept('Summer sale', 'Everything 20% off until Sunday', '/sale');
    // Herald's POST passed the push service's checks: VAPID signed by the registered key, aud, exp ≤ 24 h, sub.
    expect(received.headers['content-encoding']).toBe('aes128gcm');
    expect(received.headers.authorization).toMatch(/^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=/);
    expect(push.requests.filter((request) => request.status !== 201)).toEqual([]);

    saleNotificationId = id;
    // Firefox decrypted it and gave it to the service worker: ack 100 (101 = decryption failed).
    await push.browsers.waitForDelivered(received.messageId!, STEP_MS);

    // The visitor sees it…
    const alert = await waitForAlert(browser, 'Summer sale', STEP_MS);
    expect(alert).toMatchObject({ text: 'Everything 20% off until Sunday', source: `via ${new URL(shop.origin).host}`, clickable: true });
    const shown = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.getRegistration('/');
      return ((await registration?.getNotifications()) ?? []).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
    });
    expect(shown).toEqual([
      {
        title: 'Summer sale',
        body: 'Everything 20% off until Sunday',
        tag: `herald-${id}`,
        data: expect.objectContaining({ herald: 1, url: `${shop.origin}/sale`, api: herald.url }),
      },
    ]);
    // …and the worker's delivered beacon reached Herald.
    const stats = await until('delivered count 1', async () => {
      const data = await performance(id);
      return data.delivered === 1 ? data : undefined;
    });
    expect(stats).toMatchObject({ sent: 1, delivered: 1, clicked: 0, failed: 0 });
  });

  it('opens the destination and reports the click when the visitor clicks the notification', async () => {
    const alert = await waitForAlert(browser, 'Summer sale', STEP_MS);
    const opened = browser.waitForTarget((target) => target.url() === `${shop.origin}/sale`, { timeout: STEP_MS });
    await clickAlert(browser, alert);
    // notificationclick: the worker opened the notification's URL in a new window…
    await opened;
    expect(shop.requests).toContain('/sale');
    // …and its clicked beacon reached Herald.
    const stats = await until('clicked count 1', async () => {
      const data = await performance(saleNotificationId);
      return data.clicked === 1 ? data : undefined;
    });
    expect(stats).toMatchObject({ delivered: 1, clicked: 1, click_rate: 100 });
    expect((await shownAlerts(browser)).filter((shown) => shown.title === 'Summer sale')).toEqual([]);
  });

  it('holds a notification while Firefox is cut off and delivers it when Firefox reconnects with its uaid', async () => {
    const { uaid } = await push.browsers.waitForEvent('hello');
    push.browsers.suspend();
    await push.browsers.waitForEvent('disconnect', (event) => event.uaid === uaid);
    const notificationsBefore = push.browsers.events.filter((event) => event.type === 'notification').length;

    const { id, received } = await sendAndAccept('Back in stock', 'The stoneware mugs are back', '/');
    expect(push.browsers.isConnected(channelID)).toBe(false);
    expect(push.browsers.events.filter((event) => event.type === 'notification')).toHaveLength(notificationsBefore);

    push.browsers.resume();
    // Firefox retries by itself; it now has a subscription, so it sends its uaid, which is echoed back.
    const helloAgain = await push.browsers.waitForEvent('hello', (event) => event.sentUaid === uaid, STEP_MS);
    expect(helloAgain.uaid).toBe(uaid);
    await push.browsers.waitForDelivered(received.messageId!, STEP_MS);
    await waitForAlert(browser, 'Back in stock', STEP_MS);
    await until('delivered count 1', async () => (await performance(id)).delivered === 1);
  });

  it('renews the subscription when the push service loses it (pushsubscriptionchange), keeping the subscriber', async () => {
    const { uaid } = await push.browsers.waitForEvent('hello');
    const oldChannel = channelID;
    const seenAt = (await api('GET', `/sites/${site.id}/subscribers/${subscriberId}`)).subscriber.last_seen_at;
    // The push service loses Firefox's record: the old endpoint is gone (410) and Firefox's next
    // hello gets a new uaid, on which it drops its subscriptions and tells each service worker.
    push.browsers.forget(uaid);
    const helloWithNewUaid = await push.browsers.waitForEvent('hello', (event) => event.sentUaid === uaid && event.uaid !== uaid, STEP_MS);
    // Herald’s worker subscribed again with the site’s key, in its pushsubscriptionchange handler…
    const register = await push.browsers.waitForEvent('register', (event) => event.uaid === helloWithNewUaid.uaid && event.status === 200, STEP_MS);
    expect(register.key).toBe(site.vapid_public_key);
    expect(register.channelID).not.toBe(oldChannel);
    channelID = register.channelID;
    // …and told Herald with previous_endpoint: the same subscriber (still one, still active) was seen again…
    const { subscribers } = await until('Herald told of the renewed subscription', async () => {
      const data = await api('GET', `/sites/${site.id}/subscribers`);
      return data.subscribers[0]?.last_seen_at !== seenAt ? data : undefined;
    });
    expect(subscribers).toEqual([expect.objectContaining({ id: subscriberId, is_active: true })]);
    // …and Herald's next notification goes to the new endpoint.
    const { id, received } = await sendAndAccept('New arrivals', 'Linen napkins in four colours', '/');
    await push.browsers.waitForDelivered(received.messageId!, STEP_MS);
    await waitForAlert(browser, 'New arrivals', STEP_MS);
    await until('delivered count 1', async () => (await performance(id)).delivered === 1);
    expect(push.requests.filter((request) => request.subscriptionId === oldChannel && request.status === 410)).toEqual([]);
  });

  it('unsubscribes: Firefox unregisters the channel and Herald marks the subscriber inactive', async () => {
    expect(await page.evaluate(() => window.herald!.unsubscribe())).toBe(true);
    const unregister = await push.browsers.waitForEvent('unregister', (event) => event.channelID === channelID);
    expect(unregister.code).toBe(200); // UNSUBSCRIBE_MANUAL
    const { subscriber } = await api('GET', `/sites/${site.id}/subscribers/${subscriberId}`);
    expect(subscriber.is_active).toBe(false);

    // Nothing went wrong on the way: every push acknowledged with 100, no nack, no protocol error.
    expect(push.browsers.failures()).toEqual([]);
    expect(push.browsers.events.filter((event) => event.type === 'protocol-error')).toEqual([]);
    expect(push.browsers.events.filter((event) => event.type === 'ack')).toHaveLength(3);
    // The SDK reports trouble as `Herald: …` console warnings; Firefox prints the console to stdout.
    expect(firefox!.output().split('\n').filter((line) => line.includes('Herald:'))).toEqual([]);
    expect(consoleLines.filter((line) => line.includes('Herald'))).toEqual([]);
  });
});

declare global {
  interface Window {
    herald?: { isSubscribed(): Promise<boolean>; unsubscribe(): Promise<boolean> };
  }
}
