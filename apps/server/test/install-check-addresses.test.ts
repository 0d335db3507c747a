import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFeedServer } from './rss-feeds/local-feed-server';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The install check (docs/product.md, "Setup checklist") passes only what works:
// the snippet and the worker must load Herald from this server's PUBLIC_URL, the
// worker is fetched on the origin the page is served from after redirects, a
// worker outside the root needs Service-Worker-Allowed, and a stored result is
// dropped when the site's address or primary key changes.

interface Check {
  id: string;
  ok: boolean;
  severity: 'error' | 'warning';
  message: string;
  fix: string | null;
}
const byId = (checks: Check[]) => Object.fromEntries(checks.map((check) => [check.id, check])) as Record<string, Check>;
const page = (body: string) => `<!doctype html><html><head><title>Shop</title></head><body>${body}</body></html>`;

describe('install check: the server, the origin, the scope, and a result that no longer holds', () => {
  let t: TestApp;
  let owner: TestUser;
  let shopA: LocalFeedServer;
  let shopB: LocalFeedServer;

  beforeAll(async () => {
    shopA = await LocalFeedServer.start();
    shopB = await LocalFeedServer.start();
    t = await createTestApp({ env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    owner = await t.createUser();
  });

  afterAll(async () => {
    await t.close();
    await shopA.close();
    await shopB.close();
  });

  const check = async (siteId: string) => (await t.request('POST', `/api/sites/${siteId}/install-check`, { token: owner.token })).body.data;

  it('does not pass a snippet and worker that load Herald from another address than PUBLIC_URL (e.g. an old PUBLIC_URL)', async () => {
    const site = await t.createSite(owner.token, { name: 'Old address', url: `${shopA.origin}/` });
    // Exactly the install code, but copied while Herald was at another address.
    const old = 'https://old-herald.example.net';
    shopA.serve('/', {
      contentType: 'text/html',
      body: page(`<script src="${old}/sdk/herald.js" data-site-id="${site.id}" data-vapid-key="${site.vapid_public_key}" async></script>`),
    });
    shopA.serve('/herald-sw.js', { contentType: 'text/javascript', body: `importScripts("${old}/sdk/herald-sw.js");\n` });
    const result = await check(site.id);
    const c = byId(result.checks);
    // Herald is at http://herald.test: the page loads a script from a server that is not this Herald.
    expect(c.snippet!.ok && c.service_worker!.ok).toBe(false);
    expect(result.passed).toBe(false);
  });

  it('passes this server written another way: its host in capitals with the default port, and the worker imported with a query', async () => {
    const site = await t.createSite(owner.token, { name: 'Same server', url: `${shopA.origin}/` });
    const publicUrl = new URL(t.config.publicUrl);
    const sameServer = `${publicUrl.protocol}//${publicUrl.hostname.toUpperCase()}${publicUrl.port ? `:${publicUrl.port}` : publicUrl.protocol === 'https:' ? ':443' : ':80'}${publicUrl.pathname.replace(/\/$/, '')}`;
    shopA.serve('/', {
      contentType: 'text/html',
      body: page(`<script src="${sameServer}/sdk/herald.js" data-site-id="${site.id}" data-vapid-key="${site.vapid_public_key}" async></script>`),
    });
    shopA.serve('/herald-sw.js', { contentType: 'text/javascript', body: `importScripts("${sameServer}/sdk/herald-sw.js?v=3");\n` });
    const c = byId((await check(site.id)).checks);
    expect(c.snippet, JSON.stringify(c.snippet)).toMatchObject({ ok: true });
    expect(c.service_worker, JSON.stringify(c.service_worker)).toMatchObject({ ok: true });
  });

  it('checks the worker on the origin the page is served from after a redirect (example.com → www.example.com)', async () => {
    // shopA is the address typed in Settings; every path there redirects to shopB, where the site really lives.
    const site = await t.createSite(owner.token, { name: 'Redirected', url: `${shopA.origin}/` });
    const install = (await t.request('GET', `/api/sites/${site.id}/install-code`, { token: owner.token })).body.data;
    shopA.serve('/', { status: 301, headers: { location: `${shopB.origin}/` } });
    shopA.serve('/herald-sw.js', { status: 301, headers: { location: `${shopB.origin}/herald-sw.js` } });
    shopB.serve('/', { contentType: 'text/html', body: page(install.installCode) });
    shopB.serve('/herald-sw.js', { contentType: 'text/javascript', body: install.serviceWorker.content });
    const c = byId((await check(site.id)).checks);
    expect(c.reachable!.ok).toBe(true);
    expect(c.snippet!.ok).toBe(true);
    // A visitor's browser is on shopB and registers shopB/herald-sw.js, which is fine.
    expect(c.service_worker).toMatchObject({ ok: true });
  });

  it('does not keep showing the install check as passed after the site’s address changed', async () => {
    const site = await t.createSite(owner.token, { name: 'Moved', url: `${shopA.origin}/` });
    const install = (await t.request('GET', `/api/sites/${site.id}/install-code`, { token: owner.token })).body.data;
    shopA.serve('/', { contentType: 'text/html', body: page(install.installCode) });
    shopA.serve('/herald-sw.js', { contentType: 'text/javascript', body: install.serviceWorker.content });
    expect((await check(site.id)).passed).toBe(true);

    // The owner moves the site to a new address where nothing is installed yet.
    const patched = await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { url: 'https://shop.example.org/' } });
    expect(patched.status).toBe(200);
    const checklist = (await t.request('GET', `/api/sites/${site.id}/checklist`, { token: owner.token })).body.data.checklist;
    // The kept result is about the old address; step 2 must not say "Nothing stops push from working".
    expect(checklist.install_check?.passed ?? false).toBe(false);
  });

  it('does not keep showing the install check as passed after another VAPID key became primary', async () => {
    const site = await t.createSite(owner.token, { name: 'Rotated', url: `${shopA.origin}/` });
    const install = (await t.request('GET', `/api/sites/${site.id}/install-code`, { token: owner.token })).body.data;
    shopA.serve('/', { contentType: 'text/html', body: page(install.installCode) });
    shopA.serve('/herald-sw.js', { contentType: 'text/javascript', body: install.serviceWorker.content });
    expect((await check(site.id)).passed).toBe(true);

    const ecdh = crypto.createECDH('prime256v1');
    ecdh.generateKeys();
    const imported = await t.request('POST', `/api/sites/${site.id}/vapid-keys`, {
      token: owner.token,
      body: { public_key: ecdh.getPublicKey().toString('base64url'), private_key: ecdh.getPrivateKey().toString('base64url') },
    });
    expect((await t.request('POST', `/api/sites/${site.id}/vapid-keys/${imported.body.data.key.id}/primary`, { token: owner.token })).status).toBe(200);

    // Checking now fails (the snippet carries the older key) ...
    const stored = (await t.request('GET', `/api/sites/${site.id}/checklist`, { token: owner.token })).body.data.checklist;
    // ... but the checklist still shows the old pass.
    expect(stored.install_check?.passed ?? false).toBe(false);
  });

  it('does not pass a data-worker outside the root that the SDK registers with scope "/" (no Service-Worker-Allowed header)', async () => {
    const site = await t.createSite(owner.token, { name: 'Sub-folder worker', url: `${shopA.origin}/` });
    const install = (await t.request('GET', `/api/sites/${site.id}/install-code`, { token: owner.token })).body.data;
    shopA.serve('/', {
      contentType: 'text/html',
      body: page(`<script src="http://herald.test/sdk/herald.js" data-site-id="${site.id}" data-vapid-key="${site.vapid_public_key}" data-worker="/static/js/sw.js" async></script>`),
    });
    // No Service-Worker-Allowed header: register('/static/js/sw.js', { scope: '/' }) throws SecurityError in every browser.
    shopA.serve('/static/js/sw.js', { contentType: 'text/javascript', body: install.serviceWorker.content });
    const result = await check(site.id);
    expect(byId(result.checks).service_worker!.ok).toBe(false);
    expect(result.passed).toBe(false);
  });
});
