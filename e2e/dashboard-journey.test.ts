import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushService, type ReceivedPush, type TestSubscription } from '../apps/server/test/support/push-service';
import { expectAccessible, launchChromium, recordDialogs, type BrowserSession, type Page } from './support/browser';
import { startHerald, type HeraldProcess } from './support/herald-server';

// Issue 5's journey: three visitors subscribe through the public API (with
// subscriptions from the local push service, which checks VAPID and decrypts
// every push), a notification is written and sent from the dashboard, the
// service worker's delivered and clicked beacons come back with the token of
// the decrypted payload — and the dashboard shows it: the metric cards, today's
// point of the 7-day chart (real data, not the sample), the Recent
// Notifications list with CTR and sent count, and the notification's own
// performance. Then the help centre: a 3-letter search finds articles, 2
// letters do not search, and an article renders its headings, bullets and code.
// Every page moved to is checked with axe.

const SITE_URL = 'https://journey-shop.example';
const TITLE = 'Spring collection';
const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
];

describe('dashboard journey (headless Chromium + local push service)', () => {
  let herald: HeraldProcess;
  let push: PushService;
  let browser: BrowserSession;
  let token = '';
  let siteId = '';
  const subscriptions: TestSubscription[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${herald.url}/api${path}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const pushesTitled = (title: string): ReceivedPush[] => push.messages.filter((m) => (m.payload as { title?: string } | null)?.title === title);

  const sidebar = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  beforeAll(async () => {
    push = await PushService.start();
    herald = await startHerald({
      ADMIN_EMAIL: 'owner@example.com',
      ADMIN_PASSWORD: 'owner-password',
      ADMIN_NAME: 'Olive Owner',
      EXTRA_PUSH_ORIGINS: push.origin,
      SCHEDULER_INTERVAL_MS: '250',
    });
    token = (await api('POST', '/auth/login', { email: 'owner@example.com', password: 'owner-password' })).body.data.token;
    const site = (await api('POST', '/sites', { name: 'Journey Shop', url: SITE_URL, settings: { timezone: 'UTC' } })).body.data.site;
    siteId = site.id;

    for (const userAgent of USER_AGENTS) {
      const subscription = push.createSubscription({ applicationServerKey: site.vapid_public_key });
      const response = await fetch(`${herald.url}/api/public/sites/${siteId}/subscribers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: SITE_URL, 'user-agent': userAgent },
        body: JSON.stringify({ subscription: { endpoint: subscription.endpoint, keys: subscription.keys }, timezone: 'UTC', language: 'en' }),
      });
      expect(response.status).toBe(201);
      subscriptions.push(subscription);
    }
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
    herald?.cleanUp();
    await push?.close();
  });

  it('sends from the dashboard, counts the beacons, and shows it all on the dashboard and the notification’s view', async () => {
    const page = await browser.context.newPage();
    const dialogs = recordDialogs(page);
    await page.goto(`${herald.url}/login`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill('owner-password');
    await page.getByTestId('login-submit').click();
    await page.waitForURL('**/dashboard');

    // Before any send: the subscribers count, and the charts say they are a sample.
    const metric = (name: string) => page.getByTestId(`metric-${name}`).getByTestId('metric-value');
    await expect.poll(() => metric('total-subscribers').textContent()).toBe('3');
    expect(await metric('notifications-sent').textContent()).toBe('0');
    expect(await page.getByText('Sample data', { exact: true }).count()).toBe(2);
    await page.getByText('No notifications sent yet.').waitFor();
    await expectAccessible(page, 'dashboard before the first send');

    // Written and sent through the dashboard, as a user does it (no reloads).
    await page.getByRole('link', { name: 'New Notification' }).first().click();
    await page.waitForURL('**/notifications/new');
    await page.getByLabel(/^Title/).fill(TITLE);
    await page.getByLabel(/^Message/).fill('New arrivals are in the shop now');
    await page.getByLabel(/^Destination URL/).fill(`${SITE_URL}/spring`);
    await page.getByTestId('save-notification').click();
    await expect.poll(() => dialogs).toContain('Notification created successfully!');
    await page.waitForURL('**/notifications');
    const card = page.getByRole('article', { name: TITLE });
    await card.getByRole('button', { name: 'Send Now' }).click();
    await expect.poll(() => dialogs).toContain('Are you sure you want to send this notification?');
    await expect.poll(() => dialogs).toContain('Notification sent successfully!');

    await expect.poll(() => pushesTitled(TITLE).length, { timeout: 30_000 }).toBe(3);
    const received = pushesTitled(TITLE);
    expect(new Set(received.map((m) => m.subscriptionId))).toEqual(new Set(subscriptions.map((s) => s.id)));

    // What the service worker does: "delivered" for each shown notification, "clicked" for the one clicked,
    // each with the token Herald put in the encrypted payload.
    const beacon = async (type: 'delivered' | 'clicked', pushed: ReceivedPush) => {
      const payload = pushed.payload as { token: string; api: string };
      expect(payload.api).toBe(herald.url);
      const response = await fetch(`${payload.api}/api/public/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type, token: payload.token }) });
      expect(response.status).toBe(200);
    };
    for (const pushed of received) await beacon('delivered', pushed);
    await beacon('clicked', received[0]!);

    await expect.poll(async () => (await card.getByTestId('status-badge').textContent())?.trim(), { timeout: 20_000 }).toBe('Completed');
    // The scheduler folds the beacons into the counters about every second (docs/delivery.md, "How beacons are counted").
    await expect
      .poll(async () => {
        const today = (await api('GET', `/sites/${siteId}/analytics/dashboard`)).body.data.chart.at(-1);
        return { delivered: today.delivered, clicked: today.clicked };
      }, { timeout: 20_000 })
      .toEqual({ delivered: 3, clicked: 1 });

    // Back to the dashboard through the sidebar: the figures are fetched again, not the ones cached at sign-in.
    await sidebar(page, 'Dashboard').click();
    await page.waitForURL('**/dashboard');
    await expect.poll(() => metric('notifications-sent').textContent()).toBe('3');
    expect(await metric('total-subscribers').textContent()).toBe('3');
    expect(await metric('click-rate').textContent()).toBe('33.33%');
    expect(await page.getByText('Sample data', { exact: true }).count()).toBe(0);

    // Today's point of the 7-day chart, read from the table it offers screen readers (site timezone UTC).
    const chartTable = page.getByRole('table', { name: 'Sent, delivered and clicked notifications per day' });
    expect(await chartTable.getByRole('row').count()).toBe(8);
    const today = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' }).format(new Date());
    const todayRow = chartTable.getByRole('row', { name: new RegExp(`^${today}`) });
    expect(await todayRow.getByRole('cell').allTextContents()).toEqual(['3', '3', '1']);

    const recent = page.getByRole('heading', { name: 'Recent Notifications' }).locator('xpath=ancestor::div[contains(@class,"rounded-xl")][1]');
    const item = recent.getByRole('listitem').filter({ hasText: TITLE });
    expect(await item.getByText('33.33% CTR').count()).toBe(1);
    expect(await item.getByText('3 sent').count()).toBe(1);
    await expectAccessible(page, 'dashboard after the send');

    // The title opens the notification's own view with its performance.
    await item.getByRole('link', { name: TITLE }).click();
    await page.waitForURL(/\/notifications\/[0-9a-f-]+$/);
    await expect.poll(() => page.getByTestId('performance-sent').textContent()).toBe('3');
    expect(await page.getByTestId('performance-delivered').textContent()).toBe('3');
    expect(await page.getByTestId('performance-clicked').textContent()).toBe('1');
    expect(await page.getByTestId('performance-click-rate').textContent()).toBe('33.33%');
    expect(await page.getByTestId('performance-delivery-rate').textContent()).toBe('100%');
    await expectAccessible(page, 'notification view');

    // The API agrees with the screens.
    const dashboard = (await api('GET', `/sites/${siteId}/analytics/dashboard`)).body.data;
    expect(dashboard.metrics.notificationsSent.value).toBe(3);
    expect(dashboard.chart.at(-1)).toMatchObject({ sent: 3, delivered: 3, clicked: 1 });
    await page.close();
  });

  it('help centre: a 3-letter search finds articles, 2 letters do not search, and an article renders its headings, bullets and code', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${herald.url}/dashboard`);
    await sidebar(page, 'Help').click();
    await page.waitForURL('**/help');
    await page.getByRole('heading', { name: 'Browse by topic' }).waitFor();
    await expectAccessible(page, 'help centre');

    const search = page.getByRole('searchbox', { name: 'Search help articles' });
    await search.fill('rss');
    await page.getByRole('heading', { name: 'Search results' }).waitFor();
    const status = (await page.getByRole('status').filter({ hasText: 'match' }).textContent()) ?? '';
    expect(Number(/^(\d+) articles? match/.exec(status)?.[1])).toBeGreaterThan(1);
    await page.getByRole('link', { name: /Automatic notifications from an RSS feed/ }).waitFor();
    await expectAccessible(page, 'help search results');

    await search.fill('rs');
    await page.getByText('Type at least 3 characters to search.').waitFor();
    expect(await page.getByRole('heading', { name: 'Search results' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Browse by topic' }).isVisible()).toBe(true);

    await search.fill('');
    await page.getByRole('link', { name: /Getting Started/ }).click();
    await page.getByRole('link', { name: /Installing Herald on your website/ }).click();
    const article = page.getByRole('article');
    await article.getByRole('heading', { name: 'Installing Herald on your website', level: 2 }).waitFor();
    // Headings, bullets, check and cross lines, and code blocks.
    expect(await article.getByRole('heading', { name: '1. The script tag' }).isVisible()).toBe(true);
    expect(await article.getByRole('listitem').filter({ hasText: 'data-prompt="manual"' }).count()).toBe(1);
    const code = article.getByRole('figure').filter({ hasText: 'importScripts("https://herald.example.com/sdk/herald-sw.js");' });
    expect(await code.count()).toBe(1);
    expect(await article.locator('pre').count()).toBeGreaterThanOrEqual(3);
    expect(await article.getByText('https://your-site.com/js/herald-sw.js', { exact: false }).count()).toBe(1);
    await expectAccessible(page, 'help article');
    await page.close();
  });
});
