import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseRateLimiter } from '../src/platform/rate-limit';
import { INSTALL_CHECKS_PER_USER_PER_HOUR } from '../src/features/sites/service';
import { LocalFeedServer } from './rss-feeds/local-feed-server';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Issue 12 §2: POST /api/sites/{id}/install-check fetches the customer's site
// (a real HTTP server on 127.0.0.1 here) through the SSRF-safe outbound client
// and says what stops push from working, check by check, with a fix.

const IDS = ['reachable', 'site_https', 'public_url_https', 'snippet', 'service_worker', 'single_service_worker', 'manifest'];

interface Check {
  id: string;
  ok: boolean;
  severity: 'error' | 'warning';
  message: string;
  fix: string | null;
}

const byId = (checks: Check[]) => Object.fromEntries(checks.map((check) => [check.id, check])) as Record<string, Check>;

function page(body: string, head = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>${head}</head><body><h1>Shop</h1>${body}</body></html>`;
}

describe('install check', () => {
  let t: TestApp;
  let owner: TestUser;
  let shop: LocalFeedServer;
  let site: { id: string; vapid_public_key: string };
  let install: { installCode: string; serviceWorker: { fileName: string; content: string } };

  const check = async (siteId = site.id, token = owner.token) => t.request('POST', `/api/sites/${siteId}/install-check`, { token });

  beforeAll(async () => {
    shop = await LocalFeedServer.start();
    t = await createTestApp({ env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Pebble & Pine', url: `${shop.origin}/` });
    install = (await t.request('GET', `/api/sites/${site.id}/install-code`, { token: owner.token })).body.data;
  });

  afterAll(async () => {
    await t.close();
    await shop.close();
  });

  it('passes a site installed exactly as the install code says, keeping the https warnings of a local http site', async () => {
    shop.serve('/', { contentType: 'text/html; charset=utf-8', body: page(install.installCode, '<link rel="manifest" href="/app.webmanifest">') });
    shop.serve('/herald-sw.js', { contentType: 'text/javascript; charset=utf-8', body: install.serviceWorker.content });
    shop.serve('/app.webmanifest', { contentType: 'application/manifest+json', body: JSON.stringify({ name: 'Shop', display: 'standalone', start_url: '/' }) });

    const response = await check();
    expect(response.status).toBe(200);
    const { checks, passed, checked_at } = response.body.data;
    expect(checks.map((c: Check) => c.id)).toEqual(IDS);
    expect(passed).toBe(true);
    expect(Date.parse(checked_at)).toBeGreaterThan(Date.now() - 60_000);
    const c = byId(checks);
    for (const id of ['reachable', 'snippet', 'service_worker', 'single_service_worker', 'manifest']) {
      expect(c[id], id).toMatchObject({ ok: true, fix: null });
    }
    expect(c.reachable!.message).toBe(`Herald loaded ${shop.origin}/ (HTTP 200).`);
    expect(c.service_worker!.message).toBe(`${shop.origin}/herald-sw.js is JavaScript and imports Herald's worker.`);
    expect(c.manifest!.message).toMatch(/display "standalone"/);
    // http://127.0.0.1 works while testing, but visitors need https: warnings, not errors.
    expect(c.site_https).toMatchObject({ ok: false, severity: 'warning', message: expect.stringMatching(/only while testing/) });
    expect(c.site_https!.fix).toMatch(/HTTPS/);
    expect(c.public_url_https).toMatchObject({ ok: false, severity: 'warning', message: "Herald's own address is http://herald.test: pages on https block its script and worker as mixed content." });
    expect(c.public_url_https!.fix).toMatch(/PUBLIC_URL/);
    // It fetched the page, the worker and the manifest, nothing else.
    expect(shop.requests.map((r) => r.path).sort()).toEqual(['/', '/app.webmanifest', '/herald-sw.js']);

    // The result is kept for the setup checklist.
    const checklist = (await t.request('GET', `/api/sites/${site.id}/checklist`, { token: owner.token })).body.data.checklist;
    expect(checklist.install_check).toEqual(response.body.data);
  });

  it('says what is missing on a page without Herald, with the fix for each', async () => {
    shop.serve('/', { contentType: 'text/html', body: page('<p>No Herald here</p>') });
    shop.serve('/herald-sw.js', { status: 404, contentType: 'text/plain', body: 'not found' });
    const { checks, passed } = (await check()).body.data;
    const c = byId(checks);
    expect(passed).toBe(false);
    expect(c.reachable!.ok).toBe(true);
    expect(c.snippet).toMatchObject({ ok: false, severity: 'error', message: `The Herald snippet is not on ${shop.origin}/.` });
    expect(c.snippet!.fix).toMatch(/before <\/body>/);
    expect(c.service_worker).toMatchObject({ ok: false, severity: 'error', message: `${shop.origin}/herald-sw.js answered HTTP 404.` });
    expect(c.service_worker!.fix).toContain(install.serviceWorker.content.trim());
    expect(c.manifest).toMatchObject({ ok: false, severity: 'warning' });
    expect(c.manifest!.message).toMatch(/no web app manifest.*Home Screen/);
    expect(c.manifest!.fix).toMatch(/"display": "standalone"/);
    expect(c.single_service_worker!.ok).toBe(true);
  });

  it('finds the mistakes owners make: wrong content type, a redirect, another site’s snippet, a wrong key, another push service, a second worker, a browser-only manifest', async () => {
    const snippetOf = (siteId: string, key: string, extra = '') =>
      `<script src="http://herald.test/sdk/herald.js" data-site-id="${siteId}" data-vapid-key="${key}"${extra} async></script>`;

    shop.serve('/', { contentType: 'text/html', body: page(snippetOf(site.id, site.vapid_public_key), '<link rel="manifest" href="/m.json">') });
    shop.serve('/herald-sw.js', { contentType: 'text/plain', body: install.serviceWorker.content });
    shop.serve('/m.json', { contentType: 'application/json', body: JSON.stringify({ display: 'browser' }) });
    let c = byId((await check()).body.data.checks);
    expect(c.snippet!.ok).toBe(true);
    expect(c.service_worker).toMatchObject({ ok: false, message: `${shop.origin}/herald-sw.js is served as text/plain; browsers only register a service worker served as JavaScript.` });
    expect(c.manifest).toMatchObject({ ok: false, severity: 'warning', message: expect.stringMatching(/display is "browser"/), fix: 'Set "display": "standalone" in the manifest.' });

    shop.serve('/herald-sw.js', { status: 302, headers: { location: '/static/sw.js' } });
    shop.serve('/static/sw.js', { contentType: 'text/javascript', body: install.serviceWorker.content });
    shop.serve('/m.json', { contentType: 'application/json', body: '{ not json' });
    c = byId((await check()).body.data.checks);
    expect(c.service_worker!.message).toBe(`${shop.origin}/herald-sw.js redirects to ${shop.origin}/static/sw.js; browsers refuse to register a service worker from a redirect.`);
    expect(c.manifest!.message).toMatch(/is not valid JSON/);

    shop.serve('/herald-sw.js', { contentType: 'application/javascript', body: 'self.addEventListener("push", () => {});' });
    shop.serve('/', { contentType: 'text/html', body: page(snippetOf('a-different-site', site.vapid_public_key)) });
    c = byId((await check()).body.data.checks);
    expect(c.snippet!.message).toBe('The page has a Herald snippet for another site (data-site-id="a-different-site").');
    expect(c.service_worker!.message).toBe(`${shop.origin}/herald-sw.js does not import Herald's worker.`);

    shop.serve('/', { contentType: 'text/html', body: page(snippetOf(site.id, 'BWrongKey') + '<script src="https://cdn.onesignal.com/sdks/OneSignalSDK.js" async></script>') });
    c = byId((await check()).body.data.checks);
    expect(c.snippet!.message).toBe("The snippet on the page does not carry this site's VAPID key (data-vapid-key).");
    expect(c.single_service_worker).toMatchObject({ ok: false, severity: 'warning', message: expect.stringMatching(/^Another push service is installed on this page \(OneSignal\)/) });

    shop.serve('/', { contentType: 'text/html', body: page(snippetOf(site.id, site.vapid_public_key) + "<script>navigator.serviceWorker.register('/sw.js')</script>") });
    c = byId((await check()).body.data.checks);
    expect(c.single_service_worker).toMatchObject({ ok: false, message: expect.stringMatching(/registers another service worker \(\/sw\.js\)/) });
    expect(c.single_service_worker!.fix).toBe(`Add Herald's importScripts line to /sw.js and set data-worker="/sw.js" on the Herald snippet, so one worker does both.`);
  });

  it('follows data-worker to the site’s own worker that imports Herald’s', async () => {
    shop.serve('/', {
      contentType: 'text/html',
      body: page(
        `<script src="http://herald.test/sdk/herald.js" data-site-id="${site.id}" data-vapid-key="${site.vapid_public_key}" data-worker="/sw.js" async></script>` +
          "<script>navigator.serviceWorker.register('/sw.js')</script>",
      ),
    });
    shop.serve('/sw.js', { contentType: 'text/javascript', body: `${install.serviceWorker.content}self.addEventListener('fetch', () => {});\n` });
    const c = byId((await check()).body.data.checks);
    expect(c.snippet!.ok).toBe(true);
    expect(c.service_worker).toMatchObject({ ok: true, message: `${shop.origin}/sw.js is JavaScript and imports Herald's worker.` });
    expect(c.single_service_worker!.ok).toBe(true);
  });

  it('after a key rotation, tells a snippet with an older key of the site from a wrong key', async () => {
    const rotated = await t.createSite(owner.token, { name: 'Rotated', url: `${shop.origin}/` });
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.generateKeys();
    const imported = await t.request('POST', `/api/sites/${rotated.id}/vapid-keys`, {
      token: owner.token,
      body: { public_key: ecdh.getPublicKey().toString('base64url'), private_key: ecdh.getPrivateKey().toString('base64url') },
    });
    expect((await t.request('POST', `/api/sites/${rotated.id}/vapid-keys/${imported.body.data.key.id}/primary`, { token: owner.token })).status).toBe(200);
    shop.serve('/', { contentType: 'text/html', body: page(`<script src="http://herald.test/sdk/herald.js" data-site-id="${rotated.id}" data-vapid-key="${rotated.vapid_public_key}" async></script>`) });
    shop.serve('/herald-sw.js', { contentType: 'text/javascript', body: install.serviceWorker.content });
    const c = byId((await check(rotated.id)).body.data.checks);
    expect(c.snippet).toMatchObject({ ok: false, message: expect.stringMatching(/^The snippet on the page carries an older VAPID key of this site/) });
  });

  it('reports a page that does not load, and checks nothing that needs it', async () => {
    shop.serve('/', { status: 500, contentType: 'text/plain', body: 'oops' });
    const { checks, passed } = (await check()).body.data;
    const c = byId(checks);
    expect(passed).toBe(false);
    expect(c.reachable).toMatchObject({ ok: false, severity: 'error', message: `${shop.origin}/ answered HTTP 500.` });
    for (const id of ['snippet', 'single_service_worker', 'manifest']) expect(c[id]!.message, id).toBe('Not checked: the page could not be loaded.');
  });

  it('answers 404 for another user’s site and 429 past the hourly limit', async () => {
    const intruder = await t.createUser();
    const before = shop.requests.length;
    expect((await check(site.id, intruder.token)).status).toBe(404);
    expect((await t.request('GET', `/api/sites/${site.id}/checklist`, { token: intruder.token })).status).toBe(404);
    expect(shop.requests.length).toBe(before);

    const limiter = new DatabaseRateLimiter(t.ctx.db);
    for (let i = 0; i < INSTALL_CHECKS_PER_USER_PER_HOUR; i++) await limiter.hit(`install-check:user:${intruder.id}`, 3_600_000, Date.now());
    const own = await t.createSite(intruder.token, { url: `${shop.origin}/` });
    const refused = await check(own.id, intruder.token);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/^Too many installation checks\. Please try again in \d+ seconds\.$/);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  });
});

describe('install check without OUTBOUND_ALLOW_HOSTS', () => {
  let t: TestApp;
  let shop: LocalFeedServer;

  beforeAll(async () => {
    shop = await LocalFeedServer.start();
    t = await createTestApp({ env: { PUBLIC_URL: 'https://push.herald.example' } });
  });

  afterAll(async () => {
    await t.close();
    await shop.close();
  });

  it('refuses a private address as feeds are refused, and says how to allow an intranet site', async () => {
    const owner = await t.createUser();
    const site = await t.createSite(owner.token, { url: `${shop.origin}/` });
    const { checks, passed } = (await t.request('POST', `/api/sites/${site.id}/install-check`, { token: owner.token })).body.data;
    const c = byId(checks);
    expect(passed).toBe(false);
    expect(c.reachable).toMatchObject({ ok: false, severity: 'error', message: `${shop.origin}/ could not be loaded: Site address points to a private network address.` });
    expect(c.reachable!.fix).toBe(
      "Herald does not fetch private network addresses. If this site is on your own network, add 127.0.0.1 to OUTBOUND_ALLOW_HOSTS in Herald's configuration and restart Herald.",
    );
    expect(c.service_worker!.message).toMatch(/private network address/);
    expect(c.public_url_https).toMatchObject({ ok: true, message: 'Herald is served over HTTPS (https://push.herald.example).' });
    expect(shop.requests).toEqual([]);
  });

  it('gives an https site at a name that does not resolve a passing https check and a clear reachability failure', async () => {
    const owner = await t.createUser();
    const site = await t.createSite(owner.token, { url: 'https://shop.invalid/' });
    const c = byId((await t.request('POST', `/api/sites/${site.id}/install-check`, { token: owner.token })).body.data.checks);
    expect(c.site_https).toMatchObject({ ok: true, message: 'https://shop.invalid is served over HTTPS.' });
    expect(c.reachable).toMatchObject({ ok: false, message: 'https://shop.invalid/ could not be loaded: Site address could not be found (no DNS record for shop.invalid).' });
  });
});
