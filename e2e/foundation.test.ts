import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchChromium, recordDialogs, type BrowserSession } from './support/browser';
import { startHerald, type HeraldProcess } from './support/herald-server';

// Issue 2's journey through the real product: owner setup from the printed
// link, sign-in, a site with its install code and VAPID key, logout, and a
// password reset through the mail Herald wrote to its outbox.
describe('foundation journey (headless Chromium)', () => {
  let herald: HeraldProcess;
  let browser: BrowserSession;

  beforeAll(async () => {
    herald = await startHerald();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
    herald?.cleanUp();
  });

  it('sets up the owner, creates a site, shows its install code and VAPID key, and logs out', async () => {
    const setupLink = /(http:\/\/127\.0\.0\.1:\d+\/setup\?token=[A-Za-z0-9_-]+)/.exec(herald.output())?.[1];
    expect(setupLink, herald.output()).toBeTruthy();
    const page = await browser.context.newPage();
    const dialogs = recordDialogs(page);

    await page.goto(`${herald.url}/`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).count()).toBeGreaterThan(0);
    await expectAccessible(page, 'landing page');

    await page.goto(setupLink!);
    await page.getByRole('heading', { name: 'Create owner account' }).waitFor();
    await expectAccessible(page, 'owner setup');
    await page.getByLabel('Name').fill('Olive Owner');
    await page.getByLabel('Email').fill('olive@example.com');
    await page.getByLabel('Password').fill('olive-password-1');
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.waitForURL('**/sites/new');
    await expectAccessible(page, 'create site');
    await page.getByLabel('Site Name').fill('Olive Shop');
    await page.getByLabel('Website URL').fill('https://shop.example.com');
    await page.getByLabel('Timezone').selectOption('Europe/Paris');
    await page.getByTestId('create-site-submit').click();
    await expect.poll(() => dialogs).toContain('Site created successfully!');
    await page.waitForURL('**/dashboard');

    await page.goto(`${herald.url}/settings`);
    await page.getByTestId('current-site').getByText('Olive Shop').waitFor();
    await expectAccessible(page, 'settings (general)');
    await page.getByRole('tab', { name: 'Installation' }).click();
    await page.getByRole('button', { name: 'Show Installation Code' }).click();
    const snippet = page.getByRole('figure', { name: 'Installation snippet' });
    await snippet.waitFor();
    expect(await snippet.textContent()).toContain(`${herald.url}/sdk/herald.js`);
    await expect.poll(() => page.getByRole('figure', { name: 'herald-sw.js' }).textContent()).toContain('importScripts');
    await expectAccessible(page, 'settings (installation)');

    await page.getByRole('tab', { name: 'VAPID Keys' }).click();
    const publicKey = (await page.getByRole('figure', { name: 'VAPID public key' }).textContent())?.trim() ?? '';
    expect(publicKey).toMatch(/B[A-Za-z0-9_-]{86}/);
    await page.getByRole('img', { name: 'Private key hidden' }).waitFor();
    await expectAccessible(page, 'settings (VAPID keys)');

    // The key the dashboard shows is the one the API gives; the private key never reaches the page.
    const token = await page.evaluate(() => localStorage.getItem('token'));
    const sites = await (await fetch(`${herald.url}/api/sites`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(publicKey).toContain(sites.data.sites[0].vapid_public_key);
    expect(await page.content()).not.toMatch(/"vapid_private_key"/);

    await page.getByTestId('logout-button').click();
    await page.waitForURL('**/login');
    await expectAccessible(page, 'login');
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBeNull();
    // The old session token is dead on the server too.
    expect((await fetch(`${herald.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    await page.close();
  });

  it('resets a forgotten password through the mailed link and signs in with the new one', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${herald.url}/login`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.waitForURL('**/forgot-password');
    await expectAccessible(page, 'forgot password');
    await page.getByLabel('Email').fill('olive@example.com');
    await page.getByRole('button', { name: 'Send Reset Link' }).click();
    await page.getByText('Check your email!').waitFor();

    await expect.poll(() => herald.mails().some((m) => m.includes('To: olive@example.com')), { timeout: 10_000 }).toBe(true);
    const mail = herald.mails().find((m) => m.includes('To: olive@example.com'))!;
    const link = /(http:\/\/127\.0\.0\.1:\d+\/reset-password\?token=[A-Za-z0-9_-]+)/.exec(mail)?.[1];
    expect(link).toBeTruthy();

    await page.goto(link!);
    await expectAccessible(page, 'reset password');
    await page.getByLabel('New Password').fill('olive-new-password');
    await page.getByLabel('Confirm Password').fill('olive-new-password');
    await page.getByRole('button', { name: /reset password/i }).click();
    await page.getByText('Password reset successful!').waitFor();
    await page.waitForURL('**/login', { timeout: 10_000 });

    await page.getByLabel('Email').fill('olive@example.com');
    await page.getByLabel('Password').fill('olive-new-password');
    await page.getByTestId('login-submit').click();
    await page.waitForURL('**/dashboard');
    await page.close();
  });
});

describe('owner from ADMIN_EMAIL / ADMIN_PASSWORD, through the API', () => {
  let herald: HeraldProcess;
  beforeAll(async () => {
    herald = await startHerald({ ADMIN_EMAIL: 'admin@example.com', ADMIN_PASSWORD: 'admin-password-1', ADMIN_NAME: 'Ada Admin' });
  });
  afterAll(async () => {
    await herald?.stop();
    herald?.cleanUp();
  });

  it('signs in, creates a site and fetches its install code', async () => {
    const post = (path: string, body: unknown, token?: string) =>
      fetch(`${herald.url}/api${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
    const login = await (await post('/auth/login', { email: 'admin@example.com', password: 'admin-password-1' })).json();
    expect(login.data.user.name).toBe('Ada Admin');
    const created = await (await post('/sites', { name: 'API Site', url: 'https://api-site.example' }, login.data.token)).json();
    const code = await (await fetch(`${herald.url}/api/sites/${created.data.site.id}/install-code`, { headers: { authorization: `Bearer ${login.data.token}` } })).json();
    expect(code.data.installCode).toContain(created.data.site.vapid_public_key);
    expect(herald.output()).not.toContain('/setup?token=');
    // The SDK is served for customers' pages.
    const sdk = await fetch(`${herald.url}/sdk/herald.js`);
    expect(sdk.status).toBe(200);
    expect(sdk.headers.get('content-type')).toMatch(/javascript/);
    // Deep links load the dashboard (history fallback) with a CSP forbidding inline script.
    const deep = await fetch(`${herald.url}/settings`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="root">');
    expect(deep.headers.get('content-security-policy')).toContain("script-src 'self'");
    const docs = await (await fetch(`${herald.url}/api/docs/json`)).json();
    expect(Object.keys(docs.paths)).toContain('/api/auth/login');
  });
});
