import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

describe('sites API (spec §7 Sites)', () => {
  let t: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
  });
  afterAll(async () => t.close());

  it('runs on the database the suite asked for', () => {
    expect(t.ctx.dbKind).toBe(process.env.HERALD_TEST_DB === 'postgres' ? 'postgres' : 'sqlite');
  });

  it('creates a site with its own VAPID key pair and the spec defaults', async () => {
    const response = await t.request('POST', '/api/sites', {
      token: owner.token,
      body: { name: 'My Shop', url: 'https://shop.example.com', settings: { icon: 'https://shop.example.com/icon.png', timezone: 'Europe/Paris' } },
    });
    expect(response.status).toBe(201);
    const site = response.body.data.site;
    expect(site).toMatchObject({
      name: 'My Shop',
      url: 'https://shop.example.com',
      settings: { icon: 'https://shop.example.com/icon.png', timezone: 'Europe/Paris', language: 'en', valueCurrency: 'USD', valuePerSubscriber: 0, valuePerClick: 0 },
      subscriber_count: 0,
    });
    const publicKey = Buffer.from(site.vapid_public_key, 'base64url');
    expect(publicKey.length).toBe(65);
    expect(publicKey[0]).toBe(0x04);

    // The private key never leaves the server.
    const stored = await t.ctx.db.selectFrom('sites').select('vapid_private_key').where('id', '=', site.id).executeTakeFirstOrThrow();
    expect(Buffer.from(stored.vapid_private_key, 'base64url').length).toBe(32);
    for (const path of [`/api/sites/${site.id}`, '/api/sites', `/api/sites/${site.id}/install-code`]) {
      const body = JSON.stringify((await t.request('GET', path, { token: owner.token })).body);
      expect(body).not.toContain(stored.vapid_private_key);
    }
  });

  it('uses UTC, en and USD when no settings are given, and verifies identities', async () => {
    const site = await t.createSite(owner.token, { name: 'Blog', url: 'https://blog.example' });
    expect(site.settings).toEqual({
      icon: null,
      language: 'en',
      timezone: 'UTC',
      valueCurrency: 'USD',
      valuePerSubscriber: 0,
      valuePerClick: 0,
      identityVerification: true,
      serverOnlyTags: [],
      frequencyCap: null,
      quietHours: null,
      resubscribeGranted: true,
      replaceForeignSubscription: false,
    });
  });

  it('lists, gets, updates and deletes', async () => {
    const user = await t.createUser();
    const a = await t.createSite(user.token, { name: 'A' });
    const b = await t.createSite(user.token, { name: 'B' });
    const list = await t.request('GET', '/api/sites', { token: user.token });
    expect(list.body.data.sites.map((s: { name: string }) => s.name)).toEqual(['A', 'B']);
    expect((await t.request('GET', `/api/sites/${a.id}`, { token: user.token })).body.data.site.name).toBe('A');

    const updated = await t.request('PATCH', `/api/sites/${a.id}`, {
      token: user.token,
      body: {
        name: 'A renamed',
        url: 'https://a.example',
        settings: { language: 'pt-BR', timezone: 'Asia/Tokyo', valueCurrency: 'EUR', valuePerSubscriber: 0.5, valuePerClick: 0.05, icon: '' },
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data.site).toMatchObject({
      name: 'A renamed',
      url: 'https://a.example',
      settings: { language: 'pt-BR', timezone: 'Asia/Tokyo', valueCurrency: 'EUR', valuePerSubscriber: 0.5, valuePerClick: 0.05, icon: null },
    });
    // The keys never change.
    expect(updated.body.data.site.vapid_public_key).toBe(a.vapid_public_key);

    expect((await t.request('DELETE', `/api/sites/${b.id}`, { token: user.token })).status).toBe(200);
    expect((await t.request('GET', `/api/sites/${b.id}`, { token: user.token })).status).toBe(404);
  });

  it('answers 400 with a readable message for bad input', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ name: '', url: 'https://x.example' }, /Site name is required/],
      [{ name: 'X', url: 'not a url' }, /complete URL/],
      [{ name: 'X', url: 'javascript:alert(1)' }, /complete URL/],
      [{ name: 'X', url: 'https://x.example', settings: { timezone: 'Mars/Base' } }, /Unknown timezone/],
      [{ name: 'X', url: 'https://x.example', settings: { valuePerClick: -1 } }, /0 or more/],
      [{ name: 'X', url: 'https://x.example', settings: { valueCurrency: 'BTC' } }, /Unknown currency/],
      [{ name: 'X', url: 'https://x.example', settings: { language: 'xx' } }, /Unknown language/],
    ];
    for (const [body, message] of cases) {
      const response = await t.request('POST', '/api/sites', { token: owner.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }
  });

  it('refuses to move a site or change its keys through PATCH', async () => {
    const site = await t.createSite(owner.token);
    for (const body of [{ user_id: 'x' }, { vapid_public_key: 'x' }, { site_id: 'x' }]) {
      expect((await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body })).status).toBe(400);
    }
  });

  it('gives the install code: the script tag, the root service worker and next steps', async () => {
    const site = await t.createSite(owner.token, { name: 'Shop <3' });
    const response = await t.request('GET', `/api/sites/${site.id}/install-code`, { token: owner.token });
    expect(response.status).toBe(200);
    const code = response.body.data;
    expect(code.snippet).toContain(`src="http://herald.test/sdk/herald.js"`);
    expect(code.snippet).toContain(`data-site-id="${site.id}"`);
    expect(code.snippet).toContain(`data-vapid-key="${site.vapid_public_key}"`);
    expect(code.serviceWorker).toEqual({ fileName: 'herald-sw.js', content: 'importScripts("http://herald.test/sdk/herald-sw.js");\n' });
    // Spec §7: installCode is what goes before </body>: the page snippet only, never the worker's line.
    expect(code.installCode).toBe(code.snippet);
    expect(code.installCode).not.toContain('importScripts');
    expect(code.nextSteps.length).toBeGreaterThan(2);
    // The next steps point to test devices, never to sending a "test" to everyone from New Notification.
    expect(code.nextSteps.join('\n')).not.toMatch(/New Notification/);
    expect(code.nextSteps.join('\n')).toMatch(/test device/);
    // Herald on http (PUBLIC_URL here) is blocked as mixed content on https pages: said plainly.
    expect(code.warnings).toEqual([expect.stringMatching(/^Herald's address \(PUBLIC_URL\) is http:\/\/herald\.test, not https: .*mixed content/)]);
  });

  it('gives no warning when Herald is served over https', async () => {
    const secure = await createTestApp({ env: { PUBLIC_URL: 'https://push.herald.example' } });
    try {
      const user = await secure.createUser();
      const site = await secure.createSite(user.token);
      const code = (await secure.request('GET', `/api/sites/${site.id}/install-code`, { token: user.token })).body.data;
      expect(code.snippet).toContain('src="https://push.herald.example/sdk/herald.js"');
      expect(code.warnings).toEqual([]);
    } finally {
      await secure.close();
    }
  });

  it("answers 404 for another user's site on every route, and changes nothing", async () => {
    const intruder = await t.createUser();
    const site = await t.createSite(owner.token, { name: 'Private' });
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/sites/${site.id}`],
      ['PATCH', `/api/sites/${site.id}`, { name: 'Hacked' }],
      ['DELETE', `/api/sites/${site.id}`],
      ['GET', `/api/sites/${site.id}/install-code`],
    ];
    for (const [method, url, body] of attempts) {
      const response = await t.request(method, url, { token: intruder.token, body });
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(response.body.error.message).toBe('Site not found');
    }
    expect((await t.request('GET', '/api/sites', { token: intruder.token })).body.data.sites).toEqual([]);
    const after = await t.request('GET', `/api/sites/${site.id}`, { token: owner.token });
    expect(after.body.data.site).toEqual(site);
  });

  it('requires authentication', async () => {
    expect((await t.request('GET', '/api/sites')).status).toBe(401);
    expect((await t.request('POST', '/api/sites', { body: { name: 'x', url: 'https://x.example' } })).status).toBe(401);
  });
});
