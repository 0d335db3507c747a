import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushService, type ReceivedPush } from '../apps/server/test/support/push-service';
import { expectAccessible, launchChromium, recordDialogs, type BrowserSession } from './support/browser';
import { startHerald, type HeraldProcess } from './support/herald-server';

// Issue 3's journey: a subscriber registered through the public API receives a
// notification written and sent from the dashboard UI (the local push service
// checks VAPID and decrypts it), a scheduled one arrives when due, and the
// subscriber shows up (and can be removed) on the Subscribers page.
describe('delivery journey (headless Chromium + local push service)', () => {
  let herald: HeraldProcess;
  let push: PushService;
  let browser: BrowserSession;
  let token: string;
  let siteId: string;

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${herald.url}/api${path}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await response.json()) as any;
  };

  const waitForPush = async (title: string, timeoutMs: number): Promise<ReceivedPush> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = push.messages.find((m) => (m.payload as any)?.title === title);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no push titled "${title}" within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    push = await PushService.start();
    herald = await startHerald({
      ADMIN_EMAIL: 'owner@example.com',
      ADMIN_PASSWORD: 'owner-password',
      ADMIN_NAME: 'Olive Owner',
      EXTRA_PUSH_ORIGINS: push.origin,
      SCHEDULER_INTERVAL_MS: '250',
    });
    token = (await api('POST', '/auth/login', { email: 'owner@example.com', password: 'owner-password' })).data.token;
    siteId = (await api('POST', '/sites', { name: 'Journey Shop', url: 'https://journey.example' })).data.site.id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
    herald?.cleanUp();
    await push?.close();
  });

  it('sends a notification written in the dashboard to a subscriber who subscribed through the public API', async () => {
    const site = (await api('GET', `/sites/${siteId}`)).data.site;
    const subscription = push.createSubscription({ applicationServerKey: site.vapid_public_key });
    const subscribed = await fetch(`${herald.url}/api/public/sites/${siteId}/subscribers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://journey.example', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
      body: JSON.stringify({ subscription: { endpoint: subscription.endpoint, keys: subscription.keys }, timezone: 'Europe/Paris', language: 'fr' }),
    });
    expect(subscribed.status).toBe(201);
    expect(subscribed.headers.get('access-control-allow-origin')).toBe('*');

    const page = await browser.context.newPage();
    const dialogs = recordDialogs(page);
    await page.goto(`${herald.url}/login`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill('owner-password');
    await page.getByTestId('login-submit').click();
    await page.waitForURL('**/dashboard');

    await page.goto(`${herald.url}/notifications/new`);
    await page.getByLabel(/^Title/).fill('Spring collection');
    await page.getByLabel(/^Message/).fill('New arrivals are in the shop now');
    await page.getByLabel(/^Destination URL/).fill('https://journey.example/spring');
    await expectAccessible(page, 'new notification');
    await page.getByTestId('save-notification').click();
    await expect.poll(() => dialogs).toContain('Notification created successfully!');
    await page.waitForURL('**/notifications');
    await expectAccessible(page, 'notifications list');

    const card = page.getByRole('article', { name: 'Spring collection' });
    await card.getByRole('button', { name: 'Send Now' }).click();
    await expect.poll(() => dialogs).toContain('Are you sure you want to send this notification?');
    await expect.poll(() => dialogs).toContain('Notification sent successfully!');

    const received = await waitForPush('Spring collection', 30_000);
    expect(received.subscriptionId).toBe(subscription.id);
    expect(received.payload).toMatchObject({ body: 'New arrivals are in the shop now', url: 'https://journey.example/spring', api: herald.url });

    // The service worker's beacons, as Herald's worker sends them.
    const beaconToken = (received.payload as any).token;
    for (const type of ['delivered', 'clicked']) {
      const beacon = await fetch(`${herald.url}/api/public/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type, token: beaconToken }) });
      expect(beacon.status).toBe(200);
    }

    await expect.poll(async () => (await card.getByTestId('status-badge').textContent())?.toLowerCase(), { timeout: 20_000 }).toContain('completed');
    await card.getByRole('link', { name: 'View' }).click();
    await page.waitForURL(/\/notifications\/[0-9a-f-]+$/);
    await expect.poll(() => page.getByTestId('performance-sent').textContent()).toContain('1');
    await expect.poll(() => page.getByTestId('performance-delivered').textContent()).toContain('1');
    await expect.poll(() => page.getByTestId('performance-clicked').textContent()).toContain('1');
    await expectAccessible(page, 'notification view');
    await page.close();
  });

  it('sends a notification scheduled in the dashboard when it is due', async () => {
    const page = await browser.context.newPage();
    const dialogs = recordDialogs(page);
    await page.goto(`${herald.url}/notifications/new`);
    // The next whole minute at least 20 s away, in the site's timezone (UTC).
    const due = new Date(Math.ceil((Date.now() + 20_000) / 60_000) * 60_000);
    const local = due.toISOString().slice(0, 16);
    await page.getByLabel(/^Title/).fill('Timed offer');
    await page.getByLabel(/^Message/).fill('Starts right now');
    await page.getByLabel(/^Destination URL/).fill('https://journey.example/timed');
    await page.getByLabel(/^Schedule Time/).fill(local);
    await page.getByTestId('save-notification').click();
    await expect.poll(() => dialogs).toContain('Notification created successfully!');
    const scheduled = (await api('GET', `/sites/${siteId}/notifications?status=scheduled`)).data.notifications;
    expect(scheduled.map((n: any) => [n.title, n.scheduled_at])).toContainEqual(['Timed offer', due.toISOString()]);

    expect(push.messages.some((m) => (m.payload as any)?.title === 'Timed offer')).toBe(false);
    const received = await waitForPush('Timed offer', 120_000);
    expect(received.receivedAt).toBeGreaterThanOrEqual(due.getTime());
    await page.close();
  }, 180_000);

  it('lists the subscriber and removes it from the Subscribers page', async () => {
    const page = await browser.context.newPage();
    const dialogs = recordDialogs(page);
    await page.goto(`${herald.url}/subscribers`);
    await expect.poll(() => page.getByTestId('subscriber-total').textContent()).toContain('1');
    await expect.poll(() => page.getByText('Firefox').first().isVisible()).toBe(true);
    await expectAccessible(page, 'subscribers');
    await page.getByRole('button', { name: 'Remove' }).first().click();
    await expect.poll(() => dialogs).toContain('Are you sure you want to remove this subscriber?');
    await expect.poll(() => dialogs).toContain('Subscriber removed successfully');
    const subscribers = (await api('GET', `/sites/${siteId}/subscribers`)).data.subscribers;
    expect(subscribers[0].is_active).toBe(false);
    await page.close();
  });
});
