import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushService } from '../apps/server/test/support/push-service';
import { expectAccessible, launchChromium, recordDialogs, type BrowserSession, type Page } from './support/browser';
import { startCustomerSite, type CustomerSite } from './support/customer-site';
import { startHerald, type HeraldProcess } from './support/herald-server';
import { signInThroughUi, subscribeThroughPublicApi, USER_AGENTS } from './support/journey';

// Issue 12: a new site's setup checklist on the dashboard, walked as an owner
// would. The site is created in the dashboard; the install check runs against
// a real customer site on 127.0.0.1 (OUTBOUND_ALLOW_HOSTS lets Herald fetch
// it), first without Herald, then with the code copied from the checklist;
// then a visitor subscribes and "first subscriber" appears on the open
// dashboard without a reload. Screenshots at 1280 and 375 px go to
// ONBOARDING_SCREENSHOTS (default: a folder in the temp directory).

const OWNER = { email: 'owner@pebble-pine.example', password: 'owner-password-1' };
const SHOTS = process.env.ONBOARDING_SCREENSHOTS ?? path.join(os.tmpdir(), 'herald-onboarding-screenshots');

describe('onboarding journey: from a new site to its first subscriber (headless Chromium)', { timeout: 60_000 }, () => {
  let herald: HeraldProcess;
  let push: PushService;
  let shop: CustomerSite;
  let browser: BrowserSession;
  let page: Page;
  let siteId = '';

  const checklist = () => page.getByTestId('setup-checklist');
  const step = (n: number) => checklist().locator(`[data-step="${n}"]`);
  const check = (id: string) => step(2).locator(`[data-check="${id}"]`);

  async function screenshots(name: string) {
    fs.mkdirSync(SHOTS, { recursive: true });
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
      // Nothing wider than the screen: a phone never scrolls sideways.
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(scrollWidth, `${name} at ${width} px is wider than the screen`).toBe(width);
      // Each step on its own too: a phone's full page is too tall to read at once.
      for (const n of [1, 2, 3, 4]) await step(n).screenshot({ path: path.join(SHOTS, `${name}-${width}-step${n}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  beforeAll(async () => {
    push = await PushService.start();
    shop = await startCustomerSite();
    herald = await startHerald({
      ADMIN_EMAIL: OWNER.email,
      ADMIN_PASSWORD: OWNER.password,
      ADMIN_NAME: 'Pia Pine',
      EXTRA_PUSH_ORIGINS: push.origin,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    });
    browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    page = await browser.context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
    herald?.cleanUp();
    await shop?.close();
    await push?.close();
  }, 30_000);

  it('creates a site and finds the checklist on its dashboard, nothing done yet', async () => {
    const dialogs = recordDialogs(page);
    await signInThroughUi(page, herald.url, OWNER.email, OWNER.password);
    await page.goto(`${herald.url}/sites/new`);
    await page.getByLabel('Site Name').fill('Pebble & Pine');
    await page.getByLabel('Website URL').fill(`${shop.origin}/`);
    await page.getByRole('button', { name: /Create Site/ }).click();
    await page.waitForURL('**/dashboard');
    expect(dialogs).toEqual(['Site created successfully!']);

    await expect.poll(() => checklist().isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await checklist().getByRole('heading', { name: 'Set up Pebble & Pine' }).isVisible()).toBe(true);
    expect(await checklist().textContent()).toContain('0 of 4 done');
    expect(await step(3).getByRole('heading', { name: /Waiting for your first subscriber…/ }).isVisible()).toBe(true);
    // The code is right there, each piece with a copy button and where it goes.
    await step(1).getByRole('figure', { name: 'Snippet for your pages' }).waitFor();
    expect(await step(1).getByRole('button', { name: 'Copy Snippet for your pages' }).isVisible()).toBe(true);
    expect(await step(1).textContent()).toContain(`${shop.origin}/herald-sw.js`);
    const sites = (await (await fetch(`${herald.url}/api/sites`, { headers: { authorization: `Bearer ${await token()}` } })).json()) as any;
    siteId = sites.data.sites[0].id;
    await expectAccessible(page, 'dashboard with the setup checklist');
  });

  it('checks the site before the code is installed: the snippet and the worker are missing, with fixes', async () => {
    await step(2).getByRole('button', { name: 'Check installation' }).click();
    await check('snippet').waitFor({ timeout: 15_000 });
    expect(await check('reachable').textContent()).toContain('Site reachable · Passed');
    expect(await check('snippet').textContent()).toContain('Snippet on the page · Failed');
    expect(await check('snippet').textContent()).toContain('Fix: Paste the snippet');
    expect(await check('service_worker').textContent()).toContain('answered HTTP 404');
    expect(await step(2).getAttribute('data-done')).toBe('false');
    await screenshots('1-check-failed');
  });

  it('passes the check once the code copied from the checklist is on the site', async () => {
    const snippet = (await step(1).getByRole('figure', { name: 'Snippet for your pages' }).locator('code').textContent())!;
    const worker = (await step(1).getByRole('figure', { name: 'Service worker file for your site root' }).locator('code').textContent())!;
    expect(snippet).not.toContain('importScripts');
    shop.install({ snippet, serviceWorker: { fileName: 'herald-sw.js', content: worker } });

    const requestsBefore = shop.requests.length;
    await step(2).getByRole('button', { name: 'Check again' }).click();
    await expect.poll(async () => check('snippet').textContent(), { timeout: 15_000 }).toContain('· Passed');
    expect(await check('service_worker').textContent()).toContain("is JavaScript and imports Herald's worker");
    // http://127.0.0.1 and an http Herald work while testing: warnings, not failures.
    expect(await check('site_https').textContent()).toContain('· Warning');
    expect(await check('public_url_https').textContent()).toContain('· Warning');
    expect(await check('manifest').textContent()).toContain('· Warning');
    expect(await step(1).getAttribute('data-done')).toBe('true');
    expect(await step(2).getAttribute('data-done')).toBe('true');
    expect(await checklist().textContent()).toContain('2 of 4 done');
    // Herald fetched the page and the worker file from the shop.
    expect(shop.requests.slice(requestsBefore)).toEqual(expect.arrayContaining(['/', '/herald-sw.js']));
    await expectAccessible(page, 'checklist with install check results');
    await screenshots('2-check-passed');
  });

  it('shows the first subscriber live, without a reload', async () => {
    const site = (await (await fetch(`${herald.url}/api/sites/${siteId}`, { headers: { authorization: `Bearer ${await token()}` } })).json()) as any;
    const subscription = push.createSubscription({ applicationServerKey: site.data.site.vapid_public_key });
    await subscribeThroughPublicApi(herald.url, { siteId, origin: shop.origin, subscription, userAgent: USER_AGENTS.firefoxLinux });

    await step(3).getByRole('heading', { name: /First subscriber/ }).waitFor({ timeout: 10_000 });
    expect(await step(3).getAttribute('data-done')).toBe('true');
    expect(await step(3).textContent()).toContain('1 active now');
    expect(await checklist().textContent()).toContain('3 of 4 done');
    await screenshots('3-first-subscriber');

    // Step 4 offers the test-device link.
    await step(4).getByRole('button', { name: 'Create test-device link' }).click();
    const link = (await step(4).getByRole('figure', { name: 'Test-device link' }).locator('code').textContent())!;
    expect(link).toMatch(new RegExp(`^${shop.origin.replace(/[.]/g, '\\.')}/\\?herald_test=[\\w-]{32}$`));
    await screenshots('4-test-device-link');
  });

  let cachedToken = '';
  async function token(): Promise<string> {
    if (!cachedToken) {
      const login = await fetch(`${herald.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(OWNER) });
      cachedToken = ((await login.json()) as any).data.token;
    }
    return cachedToken;
  }
});
