import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Issue 4 §6: site API keys for the v1 API. Shown once, stored hashed,
// revocable, valid for one site only.

describe('site API keys', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  let site: { id: string };
  let otherSite: { id: string };
  let strangersSite: { id: string };
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 9));

  const create = (siteId: string, name: string, token = owner.token) => t.request('POST', `/api/sites/${siteId}/api-keys`, { token, body: { name } });
  const event = (siteId: string, authorization: string | undefined, body: unknown = { event: 'signup', external_id: 'nobody-yet' }) =>
    t.request('POST', `/api/v1/sites/${siteId}/events`, { body, headers: authorization === undefined ? {} : { authorization } });

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    stranger = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Shop' });
    otherSite = await t.createSite(owner.token, { name: 'Blog', url: 'https://blog.example' });
    strangersSite = await t.createSite(stranger.token, { name: 'Theirs', url: 'https://theirs.example' });
  });
  afterAll(async () => t.close());

  it('creates a key shown once, stored only as a hash, listed without the key', async () => {
    const created = await create(site.id, '  Shop backend  ');
    expect(created.status).toBe(201);
    const { key, api_key: apiKey } = created.body.data;
    expect(key).toMatch(/^hk_[A-Za-z0-9_-]{43}$/);
    expect(apiKey).toEqual({ id: expect.any(String), name: 'Shop backend', prefix: key.slice(0, 11), created_at: '2026-03-01T09:00:00.000Z', last_used_at: null });

    const stored = await t.ctx.db.selectFrom('site_api_keys').selectAll().where('id', '=', apiKey.id).executeTakeFirstOrThrow();
    expect(stored.key_hash).toBe(crypto.createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(key);

    const list = await t.request('GET', `/api/sites/${site.id}/api-keys`, { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.api_keys).toEqual([apiKey]);
    expect(JSON.stringify(list.body)).not.toContain(key.slice(11));

    // Two keys never collide.
    const second = await create(site.id, 'CI');
    expect(second.body.data.key).not.toBe(key);
  });

  it('authenticates v1 calls and records when a key was last used', async () => {
    const { key, api_key: apiKey } = (await create(site.id, 'Worker')).body.data;
    clock.advance(60_000);
    const accepted = await event(site.id, `Bearer ${key}`);
    expect(accepted.status).toBe(202);
    expect(accepted.body.data.event).toMatchObject({ event: 'signup', duplicate: false, subscribers: 0, triggered: 0 });
    const list = await t.request('GET', `/api/sites/${site.id}/api-keys`, { token: owner.token });
    expect(list.body.data.api_keys.find((k: { id: string }) => k.id === apiKey.id).last_used_at).toBe(new Date(clock.now()).toISOString());
  });

  it('answers 401 with a clear message for a missing, forged, revoked or other-site key, before reading the body', async () => {
    const { key, api_key: apiKey } = (await create(site.id, 'To revoke')).body.data;
    const strangersKey = (await create(strangersSite.id, 'Theirs', stranger.token)).body.data.key;
    const sessionToken = owner.token;

    const missing = await event(site.id, undefined, { nonsense: true });
    expect(missing.status).toBe(401);
    expect(missing.body.error.message).toBe('API key required: send Authorization: Bearer <site API key>');
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="herald"');

    const forgedKeys = [`hk_${crypto.randomBytes(32).toString('base64url')}`, `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, sessionToken, 'hk_', `hk_${'a'.repeat(500)}`];
    for (const forged of forgedKeys) {
      const response = await event(site.id, `Bearer ${forged}`, { nonsense: true });
      expect(response.status, forged.slice(0, 12)).toBe(401);
      expect(response.body.error.message).toBe('Invalid API key');
      expect(response.headers['www-authenticate']).toBe('Bearer realm="herald", error="invalid_token"');
    }

    // A key works for its own site only.
    for (const [siteId, otherKey] of [
      [otherSite.id, key],
      [site.id, strangersKey],
    ] as const) {
      const response = await event(siteId, `Bearer ${otherKey}`);
      expect(response.status).toBe(401);
      expect(response.body.error.message).toBe('This API key is not valid for this site');
    }
    expect((await event('no-such-site', `Bearer ${key}`)).status).toBe(401);

    const revoked = await t.request('DELETE', `/api/api-keys/${apiKey.id}`, { token: owner.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toEqual({ revoked: true });
    const afterRevoke = await event(site.id, `Bearer ${key}`);
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.body.error.message).toBe('This API key has been revoked');
    const list = await t.request('GET', `/api/sites/${site.id}/api-keys`, { token: owner.token });
    expect(list.body.data.api_keys.map((k: { id: string }) => k.id)).not.toContain(apiKey.id);
    expect((await t.request('DELETE', `/api/api-keys/${apiKey.id}`, { token: owner.token })).status).toBe(404);
  });

  it('validates the key name and the event body (after the key is accepted)', async () => {
    expect((await create(site.id, '   ')).body.error.message).toMatch(/Name is required/);
    expect((await create(site.id, 'x'.repeat(101))).status).toBe(400);
    const { key } = (await create(site.id, 'Validator')).body.data;
    const cases: Array<[unknown, RegExp]> = [
      [{ event: 'signup' }, /exactly one of subscriber_id or external_id/],
      [{ event: 'signup', subscriber_id: 'a', external_id: 'b' }, /exactly one of subscriber_id or external_id/],
      [{ event: 'sign up', external_id: 'b' }, /letters, digits/],
      [{ event: 'signup', external_id: 'b', data: [1, 2] }, /data/],
      [{ event: 'signup', external_id: 'b', data: { blob: 'x'.repeat(5000) } }, /at most 4096 characters/],
      [{ event: 'signup', external_id: 'b', idempotency_key: '' }, /idempotency_key/],
    ];
    for (const [body, message] of cases) {
      const response = await event(site.id, `Bearer ${key}`, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }
    const unknownSubscriber = await event(site.id, `Bearer ${key}`, { event: 'signup', subscriber_id: crypto.randomUUID() });
    expect(unknownSubscriber.status).toBe(404);
    expect(unknownSubscriber.body.error.message).toBe('Subscriber not found');
  });

  it('keeps at most 25 active keys per site', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await create(otherSite.id, `Key ${i}`)).body.data.api_key.id);
    const refused = await create(otherSite.id, 'One too many');
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe('A site can have at most 25 API keys; revoke one you no longer use first');
    await t.request('DELETE', `/api/api-keys/${ids[0]}`, { token: owner.token });
    expect((await create(otherSite.id, 'Replacement')).status).toBe(201);
  });

  it('another user can neither list, create nor revoke a site’s keys (404, nothing changed)', async () => {
    const { api_key: apiKey } = (await create(site.id, 'Guarded')).body.data;
    const before = await t.ctx.db.selectFrom('site_api_keys').selectAll().orderBy('id').execute();
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/sites/${site.id}/api-keys`],
      ['POST', `/api/sites/${site.id}/api-keys`, { name: 'Mine now' }],
      ['DELETE', `/api/api-keys/${apiKey.id}`],
      ['GET', `/api/sites/${site.id}/events`],
    ];
    for (const [method, url, body] of attempts) {
      const response = await t.request(method, url, { token: stranger.token, body });
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(response.body.success).toBe(false);
    }
    expect(await t.ctx.db.selectFrom('site_api_keys').selectAll().orderBy('id').execute()).toEqual(before);
    // Without a session: 401.
    expect((await t.request('GET', `/api/sites/${site.id}/api-keys`)).status).toBe(401);
  });

  it('documents the v1 API with its own security scheme', async () => {
    const doc = await t.request('GET', '/api/docs/json');
    expect(doc.status).toBe(200);
    expect(doc.body.components.securitySchemes.siteApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.body.paths['/api/v1/sites/{siteId}/events'].post.security).toEqual([{ siteApiKey: [] }]);
    expect(doc.body.paths['/api/sites/{siteId}/api-keys'].post).toBeDefined();
    expect(doc.body.paths['/api/public/sites/{siteId}/track'].post.security).toEqual([]);
  });
});
