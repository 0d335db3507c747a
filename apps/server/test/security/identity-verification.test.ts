import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { fcmEndpoint, identityHashFor, nextAddress, pushKeys } from './support/fixtures';

// Issue 10 item 3 (docs/security.md, "Identity verification"): `identify`
// let any visitor claim any customer's id, and with it that customer's
// notifications. A site's backend now signs the id (HMAC-SHA256 with the
// site's identity secret) and Herald refuses unsigned or wrongly signed claims
// on sites that verify identities; tags the site keeps for its backend are
// refused from the browser.

describe('identity verification for identify, and server-only tags', () => {
  let t: TestApp;
  let owner: TestUser;

  const asOwner = (method: string, url: string, body?: unknown, token = owner.token) => t.request(method, url, { token, ...(body !== undefined ? { body } : {}) });
  const publicCall = (siteId: string, path: 'identify' | 'tags', body: unknown) =>
    t.request('POST', `/api/public/sites/${siteId}/${path}`, { body, headers: { origin: 'https://shop.example' }, remoteAddress: nextAddress() });
  const apiCall = (siteId: string, path: string, key: string, body: unknown) =>
    t.request('POST', `/api/v1/sites/${siteId}/${path}`, { body, headers: { authorization: `Bearer ${key}` } });

  async function subscribe(siteId: string): Promise<{ id: string; endpoint: string }> {
    const endpoint = fcmEndpoint();
    const response = await t.request('POST', `/api/public/sites/${siteId}/subscribers`, { body: { subscription: { endpoint, keys: pushKeys() } }, remoteAddress: nextAddress() });
    expect(response.status).toBe(201);
    return { id: response.body.data.subscriber.id, endpoint };
  }

  async function secretOf(siteId: string): Promise<string> {
    const response = await asOwner('GET', `/api/sites/${siteId}/identity-secret`);
    expect(response.status).toBe(200);
    return response.body.data.secret;
  }

  async function externalIdOf(subscriberId: string) {
    return t.ctx.db.selectFrom('subscribers').select(['external_id', 'external_id_verified']).where('id', '=', subscriberId).executeTakeFirstOrThrow();
  }

  async function apiKeyOf(siteId: string): Promise<string> {
    const created = await asOwner('POST', `/api/sites/${siteId}/api-keys`, { name: 'Backend' });
    expect(created.status).toBe(201);
    return created.body.data.key;
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
  });
  afterAll(async () => t.close());

  it('gives every new site its own 256-bit secret and turns verification on', async () => {
    const a = await t.createSite(owner.token, { name: 'A' });
    const b = await t.createSite(owner.token, { name: 'B' });
    expect(a.settings.identityVerification).toBe(true);
    const [secretA, secretB] = [await secretOf(a.id), await secretOf(b.id)];
    expect(secretA).toMatch(/^[0-9a-f]{64}$/);
    expect(secretB).toMatch(/^[0-9a-f]{64}$/);
    expect(secretA).not.toBe(secretB);
    expect(await secretOf(a.id)).toBe(secretA);
    // The secret is no part of the site as listed, and its answer is not cached.
    expect(JSON.stringify((await asOwner('GET', `/api/sites/${a.id}`)).body)).not.toContain(secretA);
    expect((await asOwner('GET', `/api/sites/${a.id}/identity-secret`)).headers['cache-control']).toBe('no-store');
  });

  it('refuses an unsigned claim (401) and a wrong hash (403), accepts the right one; refusals store nothing', async () => {
    const site = await t.createSite(owner.token);
    const secret = await secretOf(site.id);
    const browser = await subscribe(site.id);

    const unsigned = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-42' });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toEqual({ success: false, error: { message: expect.stringMatching(/^identity_hash is required/), code: 'identity_hash_required' } });

    const wrongHashes = [
      identityHashFor(secret, 'customer-41'), // a real signature, for someone else
      identityHashFor(crypto.randomBytes(32).toString('hex'), 'customer-42'), // another key
      identityHashFor(secret, 'customer-42').replace(/.$/, (c) => (c === '0' ? '1' : '0')), // one digit off
    ];
    for (const identity_hash of wrongHashes) {
      const wrong = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-42', identity_hash });
      expect(wrong.status).toBe(403);
      expect(wrong.body.error).toEqual({ message: expect.stringMatching(/^identity_hash does not match external_id/), code: 'identity_hash_mismatch' });
    }
    const malformed = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-42', identity_hash: identityHashFor(secret, 'customer-42').toUpperCase() });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toMatch(/64 lowercase hex characters/);
    expect(await externalIdOf(browser.id)).toEqual({ external_id: null, external_id_verified: 0 });

    const signed = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-42', identity_hash: identityHashFor(secret, 'customer-42') });
    expect(signed.status).toBe(200);
    expect(signed.body.data).toEqual({ subscriber: { id: browser.id, external_id: 'customer-42', verified: true } });
    expect(await externalIdOf(browser.id)).toEqual({ external_id: 'customer-42', external_id_verified: 1 });
  });

  it('still accepts unsigned claims when the owner turns verification off, but checks a hash that is given', async () => {
    const site = await t.createSite(owner.token);
    const secret = await secretOf(site.id);
    const off = await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { identityVerification: false } });
    expect(off.status).toBe(200);
    expect(off.body.data.site.settings.identityVerification).toBe(false);
    const browser = await subscribe(site.id);

    const unsigned = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-7' });
    expect(unsigned.status).toBe(200);
    expect(unsigned.body.data.subscriber).toEqual({ id: browser.id, external_id: 'customer-7', verified: false });
    expect(await externalIdOf(browser.id)).toEqual({ external_id: 'customer-7', external_id_verified: 0 });

    expect((await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-8', identity_hash: identityHashFor(secret, 'customer-7') })).status).toBe(403);
    expect(await externalIdOf(browser.id)).toEqual({ external_id: 'customer-7', external_id_verified: 0 });
    const signed = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-8', identity_hash: identityHashFor(secret, 'customer-8') });
    expect(signed.body.data.subscriber.verified).toBe(true);

    // And on again: unsigned claims are refused once more.
    expect((await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { identityVerification: true } })).body.data.site.settings.identityVerification).toBe(true);
    expect((await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-9' })).status).toBe(401);
    expect((await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { identityVerification: 'yes' } })).status).toBe(400);
  });

  it('rotating the secret invalidates hashes made with the old one', async () => {
    const site = await t.createSite(owner.token);
    const browser = await subscribe(site.id);
    const old = await secretOf(site.id);

    const rotated = await asOwner('POST', `/api/sites/${site.id}/identity-secret/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const fresh: string = rotated.body.data.secret;
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    expect(fresh).not.toBe(old);
    expect(await secretOf(site.id)).toBe(fresh);

    const stale = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-42', identity_hash: identityHashFor(old, 'customer-42') });
    expect(stale.status).toBe(403);
    const current = await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-42', identity_hash: identityHashFor(fresh, 'customer-42') });
    expect(current.status).toBe(200);
  });

  it("is the owner's alone: another user's site answers 404 and its secret stays as it was", async () => {
    const site = await t.createSite(owner.token);
    const secret = await secretOf(site.id);
    const intruder = await t.createUser();
    for (const [method, url] of [
      ['GET', `/api/sites/${site.id}/identity-secret`],
      ['POST', `/api/sites/${site.id}/identity-secret/rotate`],
      ['GET', '/api/sites/no-such-site/identity-secret'],
    ] as const) {
      const response = await asOwner(method, url, undefined, intruder.token);
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(response.body).toEqual({ success: false, error: { message: 'Site not found', code: 'not_found' } });
    }
    const patched = await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { identityVerification: false } }, intruder.token);
    expect(patched.status).toBe(404);
    expect(await secretOf(site.id)).toBe(secret);
    expect((await asOwner('GET', `/api/sites/${site.id}`)).body.data.site.settings.identityVerification).toBe(true);
    expect((await t.request('GET', `/api/sites/${site.id}/identity-secret`)).status).toBe(401);
  });

  it('only signed claims count for an external id on a verifying site: unsigned claims cannot crowd the customer out of the 100 cap', async () => {
    const site = await t.createSite(owner.token);
    const secret = await secretOf(site.id);
    const key = await apiKeyOf(site.id);
    // Before verification was on, 100 browsers claimed customer-42 unsigned; the customer's own browser signed.
    expect((await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { identityVerification: false } })).status).toBe(200);
    const forged: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      const browser = await subscribe(site.id);
      expect((await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-42' })).status).toBe(200);
      forged.push(browser.id);
    }
    const customer = await subscribe(site.id);
    const signed = await publicCall(site.id, 'identify', { endpoint: customer.endpoint, external_id: 'customer-42', identity_hash: identityHashFor(secret, 'customer-42') });
    expect(signed.body.data.subscriber.verified).toBe(true);

    // Unverified site: signed claims come first, so the customer is inside the 100.
    const reachedWhileOff = await apiCall(site.id, 'subscribers/tags', key, { external_id: 'customer-42', add: ['reached-off'] });
    expect(reachedWhileOff.status).toBe(200);
    expect(reachedWhileOff.body.data.subscribers).toHaveLength(100);
    expect(reachedWhileOff.body.data.subscribers.map((s: { id: string }) => s.id)).toContain(customer.id);

    expect((await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { identityVerification: true } })).status).toBe(200);
    const event = await apiCall(site.id, 'events', key, { event: 'order_shipped', external_id: 'customer-42' });
    expect(event.status).toBe(202);
    expect(event.body.data.event.subscribers).toBe(1);
    const [stored] = (await asOwner('GET', `/api/sites/${site.id}/events`)).body.data.events;
    expect(stored).toMatchObject({ event: 'order_shipped', subscriber_id: customer.id, external_id: 'customer-42' });
    const reachedWhileOn = await apiCall(site.id, 'subscribers/tags', key, { external_id: 'customer-42', add: ['reached-on'] });
    expect(reachedWhileOn.body.data.subscribers).toEqual([{ id: customer.id, tags: ['reached-off', 'reached-on'] }]);

    // And with verification on, a fresh unsigned claim is refused outright.
    const late = await subscribe(site.id);
    expect((await publicCall(site.id, 'identify', { endpoint: late.endpoint, external_id: 'customer-42' })).status).toBe(401);
    expect(await externalIdOf(late.id)).toEqual({ external_id: null, external_id_verified: 0 });
  });

  it('refuses server-only tags from the browser and sets them through the API key route', async () => {
    const site = await t.createSite(owner.token);
    const key = await apiKeyOf(site.id);
    const browser = await subscribe(site.id);
    const secret = await secretOf(site.id);
    await publicCall(site.id, 'identify', { endpoint: browser.endpoint, external_id: 'customer-5', identity_hash: identityHashFor(secret, 'customer-5') });

    const marked = await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { serverOnlyTags: [' plan-pro ', 'vip', 'vip', ''] } });
    expect(marked.status).toBe(200);
    expect(marked.body.data.site.settings.serverOnlyTags).toEqual(['plan-pro', 'vip']);
    expect((await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { serverOnlyTags: ['x'.repeat(65)] } })).status).toBe(400);
    expect((await asOwner('PATCH', `/api/sites/${site.id}`, { settings: { serverOnlyTags: 'vip' } })).status).toBe(400);

    const tagsOf = async () => (await asOwner('GET', `/api/sites/${site.id}/subscribers/${browser.id}`)).body.data.subscriber.tags;

    for (const body of [{ add: ['plan-pro'] }, { add: ['newsletter', 'vip'] }, { remove: ['vip'] }, { add: ['newsletter'], remove: ['plan-pro'] }]) {
      const refused = await publicCall(site.id, 'tags', { endpoint: browser.endpoint, ...body });
      expect(refused.status, JSON.stringify(body)).toBe(403);
      expect(refused.body.error.code).toBe('server_only_tag');
      expect(refused.body.error.message).toMatch(/set by the site’s server only: (plan-pro|vip)/);
    }
    expect(await tagsOf()).toEqual([]);
    // Other tags still work from the browser.
    expect((await publicCall(site.id, 'tags', { endpoint: browser.endpoint, add: ['newsletter'] })).body.data.subscriber.tags).toEqual(['newsletter']);

    const bySubscriber = await apiCall(site.id, 'subscribers/tags', key, { subscriber_id: browser.id, add: ['plan-pro', 'vip'] });
    expect(bySubscriber.status).toBe(200);
    expect(bySubscriber.body.data).toEqual({ subscribers: [{ id: browser.id, tags: ['newsletter', 'plan-pro', 'vip'] }] });
    expect((await publicCall(site.id, 'tags', { endpoint: browser.endpoint, remove: ['plan-pro'] })).status).toBe(403);
    const byExternalId = await apiCall(site.id, 'subscribers/tags', key, { external_id: 'customer-5', remove: ['vip'] });
    expect(byExternalId.body.data).toEqual({ subscribers: [{ id: browser.id, tags: ['newsletter', 'plan-pro'] }] });
    expect(await tagsOf()).toEqual(['newsletter', 'plan-pro']);

    // The key route's own rules: a key, exactly one target, a known subscriber, at most 50 tags (all or nothing).
    expect((await t.request('POST', `/api/v1/sites/${site.id}/subscribers/tags`, { body: { subscriber_id: browser.id, add: ['vip'] } })).status).toBe(401);
    expect((await apiCall(site.id, 'subscribers/tags', key, { subscriber_id: browser.id, external_id: 'customer-5', add: ['vip'] })).status).toBe(400);
    expect((await apiCall(site.id, 'subscribers/tags', key, { subscriber_id: browser.id })).status).toBe(400);
    expect((await apiCall(site.id, 'subscribers/tags', key, { subscriber_id: 'no-such-subscriber', add: ['vip'] })).status).toBe(404);
    const tooMany = await apiCall(site.id, 'subscribers/tags', key, { subscriber_id: browser.id, add: Array.from({ length: 49 }, (_, i) => `tag-${i}`) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/at most 50 tags/);
    expect(await tagsOf()).toEqual(['newsletter', 'plan-pro']);
    // An unknown external id changes nobody.
    expect((await apiCall(site.id, 'subscribers/tags', key, { external_id: 'nobody', add: ['vip'] })).body.data).toEqual({ subscribers: [] });
  });
});
