import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushService, TestSubscription } from '../apps/server/test/support/push-service';
import { expectAccessible, recordDialogs, shootAtWidths, type Page } from './support/browser';
import type { HeraldProcess } from './support/herald-server';
import { USER_AGENTS, signInThroughUi, subscribeThroughPublicApi, waitUntil } from './support/journey';
import { JOURNEY_OWNER, openShopJourney, type ShopJourney } from './support/shop-journey';

// Issue 11's journey: a push service that accepts some pushes, answers 410
// and 500 for others, and a third browser's push service that cannot be
// reached. A notification is written and sent from the composer (Send Now),
// and the same numbers show on the notification page, the list, the
// dashboard (Recent Notifications and the Delivery section) and a welcome
// campaign's card. Pages are screenshotted at 375 px and 1280 px for review
// (the folder is printed), and checked with axe.

const SITE_URL = 'https://outcomes-shop.example';
const SHOTS = process.env.HERALD_SCREENSHOTS ?? path.join(os.tmpdir(), 'herald-send-outcomes-shots');

async function closedOrigin(): Promise<string> {
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: taken } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(taken));
    });
  });
  return `http://127.0.0.1:${port}`;
}

describe('send outcomes journey (headless Chromium, a push service that fails some pushes)', () => {
  let journey: ShopJourney;
  let herald: HeraldProcess;
  let push: PushService;
  let api: ShopJourney['api'];
  let unreachable: string;
  let siteId = '';
  let vapidKey = '';

  const subscribe = async (options: { answer?: { status: number; body?: string }; unreachable?: boolean } = {}): Promise<TestSubscription> => {
    const created = push.createSubscription({ applicationServerKey: vapidKey });
    const subscription = options.unreachable ? { ...created, endpoint: created.endpoint.replace(push.origin, unreachable) } : created;
    if (options.answer) push.setAnswer(options.answer, created.id);
    await subscribeThroughPublicApi(herald.url, { siteId, origin: SITE_URL, subscription, userAgent: USER_AGENTS.chromeWindows });
    return subscription;
  };

  const shoot = (page: Page, name: string) => shootAtWidths(page, SHOTS, name, [1280, 375]);

  beforeAll(async () => {
    unreachable = await closedOrigin();
    journey = await openShopJourney({
      site: { name: 'Outcomes Shop', url: SITE_URL },
      extraPushOrigins: [unreachable],
      env: { DELIVERY_MAX_ATTEMPTS: '3', DELIVERY_RETRY_BASE_MS: '200' },
    });
    ({ herald, push, api } = journey);
    siteId = journey.site.id;
    vapidKey = journey.site.vapid_public_key;
    console.log(`send-outcomes journey screenshots: ${SHOTS}`);
  }, 120_000);

  afterAll(async () => journey?.close());

  it('shows the same counts and reasons on the notification page, the list, the dashboard and a campaign card', async () => {
    // 3 accept, 1 answers 410, 1 answers 500 every time, 2 are on a push service nobody can reach.
    for (let i = 0; i < 3; i++) await subscribe();
    await subscribe({ answer: { status: 410 } });
    await subscribe({ answer: { status: 500, body: 'internal error' } });
    await subscribe({ unreachable: true });
    await subscribe({ unreachable: true });

    const page = await journey.browser.context.newPage();
    const dialogs = recordDialogs(page);
    await signInThroughUi(page, herald.url, JOURNEY_OWNER.email, JOURNEY_OWNER.password);

    // The composer: reach before sending, then Send Now with the spec's confirm and alert.
    await page.goto(`${herald.url}/notifications/new`);
    await expect.poll(() => page.getByTestId('reach').textContent(), { timeout: 10_000 }).toBe('Will reach 7 subscribers');
    await expect.poll(() => page.getByRole('combobox', { name: 'Target Segment' }).locator('option').first().textContent()).toBe('All Subscribers (7)');
    await page.getByLabel(/^Title/).fill('Summer sale');
    await page.getByLabel(/^Message/).fill('Everything 20% off until Sunday');
    await page.getByLabel(/^Destination URL/).fill(`${SITE_URL}/sale`);
    await shoot(page, '1-composer');
    await page.getByRole('button', { name: 'Send Now' }).click();
    await expect.poll(() => dialogs).toContain('Are you sure you want to send this notification?');
    await expect.poll(() => dialogs, { timeout: 10_000 }).toContain('Notification sent successfully!');
    await page.waitForURL(/\/notifications\/[0-9a-f-]+$/);
    const id = page.url().split('/').pop()!;

    const done = await waitUntil('the send to finish', 60_000, async () => {
      const notification = (await api.call('GET', `/notifications/${id}`)).data.notification;
      return ['completed', 'completed_with_errors', 'failed'].includes(notification.status) ? notification : undefined;
    });
    expect(done.status).toBe('completed_with_errors');
    expect(done.counts).toEqual({ targeted: 7, sent: 3, failed: 3, expired: 1, skipped: 0, pending: 0, delivered: 0, clicked: 0 });
    const performance = (await api.call('GET', `/notifications/${id}/performance`)).data;
    expect(performance.failures.map((g: any) => [g.reason, g.push_service, g.count])).toEqual([
      ['unreachable', 'other', 2],
      ['server_error', 'other', 1],
    ]);

    // The notification page: the counts, the failure reasons with their next step.
    await page.reload();
    await expect.poll(() => page.getByTestId('status-badge').textContent(), { timeout: 10_000 }).toBe('Completed with errors');
    await expect.poll(() => page.getByTestId('performance-targeted').textContent()).toBe('7');
    expect(await page.getByTestId('performance-sent').textContent()).toBe('3');
    expect(await page.getByTestId('performance-failed').textContent()).toBe('3');
    expect(await page.getByTestId('performance-expired').textContent()).toBe('1');
    expect(await page.getByTestId('performance-pending').textContent()).toBe('0');
    expect(await page.getByText('Completed with errors: 3 of 7 failed (42.9%)').count()).toBe(1);
    const groups = page.getByTestId('failure-group');
    await expect.poll(() => groups.count()).toBe(2);
    expect(await groups.nth(0).textContent()).toContain('2 · Push service unreachable · Other push service');
    expect(await groups.nth(0).textContent()).toContain('ECONNREFUSED');
    expect(await groups.nth(1).textContent()).toContain('1 · Push service error (5xx)');
    // "Sent" only once something was accepted: this one was.
    expect(await page.getByText('Sent', { exact: true }).count()).toBeGreaterThan(0);
    await expectAccessible(page, 'notification page');
    await shoot(page, '2-notification-page');

    // The CSV report: one line per delivery, the same outcomes.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    const outcomes = csv
      .trim()
      .split('\r\n')
      .slice(1)
      .map((line) => line.split(',')[6]);
    expect({ sent: outcomes.filter((o) => o === 'sent').length, failed: outcomes.filter((o) => o === 'failed').length, expired: outcomes.filter((o) => o === 'expired').length }).toEqual({
      sent: 3,
      failed: 3,
      expired: 1,
    });

    // The list: the card's figures and the filter counts that add up.
    await page.goto(`${herald.url}/notifications`);
    const card = page.getByRole('article', { name: 'Summer sale' });
    await expect.poll(() => card.getByTestId('status-badge').textContent(), { timeout: 10_000 }).toBe('Completed with errors');
    expect(await card.getByTestId('outcome-sent').textContent()).toBe('3');
    expect(await card.getByTestId('outcome-failed').textContent()).toBe('3 (42.9%)');
    expect(await card.getByTestId('outcome-expired').textContent()).toBe('1');
    expect(await card.getByTestId('target').textContent()).toBe('All Subscribers');
    expect(await card.getByTestId('failure-reason').textContent()).toBe('3 of 7 failed (42.9%). See why');
    const filters = page.getByRole('group', { name: 'Filter by status' });
    expect(await filters.getByRole('button', { name: 'Completed' }).textContent()).toBe('Completed1');
    expect(await filters.getByRole('button', { name: 'All' }).textContent()).toBe('All1');
    await expectAccessible(page, 'notifications list');
    await shoot(page, '3-list');

    // A welcome campaign: two new browsers, one on the push service nobody can reach.
    const campaign = await api.call('POST', `/sites/${siteId}/welcome-campaigns`, {
      name: 'Welcome series',
      is_active: true,
      steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Welcome!', message: 'Thanks for subscribing', destination_url: `${SITE_URL}/welcome` } }],
    });
    expect(campaign.success).toBe(true);
    await subscribe();
    await subscribe({ unreachable: true });
    const stepStats = await waitUntil('the welcome step to finish', 60_000, async () => {
      const step = (await api.call('GET', `/welcome-campaigns/${campaign.data.campaign.id}`)).data.campaign.steps[0].stats;
      return step.targeted === 2 && step.pending === 0 ? step : undefined;
    });
    expect(stepStats).toMatchObject({ targeted: 2, sent: 1, failed: 1, expired: 0 });
    await page.goto(`${herald.url}/campaigns`);
    const campaignCard = page.getByRole('article', { name: 'Welcome series' });
    const step = campaignCard.getByRole('list', { name: 'Steps of Welcome series' }).getByRole('listitem').first();
    await expect.poll(() => step.getByTestId('outcome-sent').textContent(), { timeout: 10_000 }).toBe('1');
    expect(await step.getByTestId('outcome-failed').textContent()).toBe('1 (50%)');
    expect(await campaignCard.getByTestId('campaign-failed').textContent()).toBe('1 (50%)');
    await expectAccessible(page, 'campaigns');
    await shoot(page, '4-campaigns');

    // The dashboard: Recent Notifications with the failures, and the Delivery section.
    await page.goto(`${herald.url}/dashboard`);
    const recent = page.getByTestId(`recent-${id}`);
    await expect.poll(() => recent.getByTestId('recent-sent').textContent(), { timeout: 15_000 }).toBe('3 sent');
    expect(await recent.getByTestId('recent-failed').textContent()).toBe('3 failed (42.9%)');
    const other = page.getByTestId('health-other');
    // The send and the welcome step together: 4 accepted, 4 failed, 1 expired.
    await expect.poll(() => other.getByTestId('health-accepted').textContent(), { timeout: 15_000 }).toBe('4');
    expect(await other.getByTestId('health-failed').textContent()).toBe('4');
    expect(await other.getByTestId('health-expired').textContent()).toBe('1');
    expect(await other.getByRole('list', { name: 'Failures at Other push service' }).textContent()).toContain('3 · Push service unreachable');
    expect(await page.getByTestId('churn-totals').textContent()).toBe('9 new subscriptions · 1 lost (1 expired at the push service, 0 unsubscribed or removed)');
    await expectAccessible(page, 'dashboard');
    await shoot(page, '5-dashboard');
    await page.close();
  }, 240_000);
});
