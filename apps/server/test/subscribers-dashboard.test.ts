import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The dashboard subscriber API (spec §2 Subscribers, §7 Subscribers).

const UA = {
  chromeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
  safariIos:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
};
const GB = '81.2.69.142';
const US = '8.8.8.8';

function subscription() {
  const ecdh = crypto.createECDH('prime256v1');
  return {
    endpoint: `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(16).toString('base64url')}`,
    keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') },
  };
}

describe('dashboard subscriber API', () => {
  let t: TestApp;
  let owner: TestUser;
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));

  /** Subscribes through the public API (as the SDK would), one minute after the previous one. */
  async function addSubscriber(siteId: string, userAgent: string, address = '127.0.0.1') {
    clock.advance(60_000);
    const sub = subscription();
    const response = await t.app.inject({
      method: 'POST',
      url: `/api/public/sites/${siteId}/subscribers`,
      remoteAddress: address,
      headers: { 'user-agent': userAgent },
      payload: { subscription: sub, language: 'en-US', timezone: 'UTC' },
    });
    expect(response.statusCode).toBe(201);
    return { id: response.json().data.subscriber.id as string, endpoint: sub.endpoint };
  }

  async function activeCount(siteId: string): Promise<number> {
    return (await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', siteId).executeTakeFirstOrThrow()).active_subscriber_count;
  }

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
  });
  afterAll(async () => t.close());

  it('lists subscribers newest first with the spec fields, total, page and limit', async () => {
    const site = await t.createSite(owner.token);
    const first = await addSubscriber(site.id, UA.chromeWindows, GB);
    const second = await addSubscriber(site.id, UA.firefoxLinux, US);
    const third = await addSubscriber(site.id, 'unknown agent');

    const response = await t.request('GET', `/api/sites/${site.id}/subscribers`, { token: owner.token });
    expect(response.status).toBe(200);
    const { subscribers, total, page, limit } = response.body.data;
    expect({ total, page, limit }).toEqual({ total: 3, page: 1, limit: 50 });
    expect(subscribers.map((s: { id: string }) => s.id)).toEqual([third.id, second.id, first.id]);
    expect(subscribers[2]).toEqual({
      id: first.id,
      browser: 'Chrome',
      os: 'Windows',
      country: 'GB',
      metadata: { user_agent: UA.chromeWindows },
      language: 'en-US',
      timezone: 'UTC',
      subscribed_at: new Date(clock.now() - 2 * 60_000).toISOString(),
      last_seen_at: new Date(clock.now() - 2 * 60_000).toISOString(),
      unsubscribed_at: null,
      is_active: true,
      tags: [],
      test_device: false,
      test_device_name: null,
    });
    expect(subscribers[0]).toMatchObject({ browser: 'Unknown', os: 'Unknown', country: 'Unknown' });
    // Endpoint and keys never leave the server.
    expect(JSON.stringify(response.body)).not.toMatch(/fcm\.googleapis|p256dh|"auth"/);
  });

  it('filters by active state, searches browser, OS or country (code or name) and pages with the same total', async () => {
    const site = await t.createSite(owner.token);
    const chrome = await addSubscriber(site.id, UA.chromeWindows, GB);
    const firefox = await addSubscriber(site.id, UA.firefoxLinux, US);
    const safari = await addSubscriber(site.id, UA.safariIos, US);
    const gone = await addSubscriber(site.id, UA.chromeWindows, US);
    expect((await t.request('DELETE', `/api/subscribers/${gone.id}`, { token: owner.token })).status).toBe(200);

    const list = async (query: string) => {
      const response = await t.request('GET', `/api/sites/${site.id}/subscribers?${query}`, { token: owner.token });
      expect(response.status).toBe(200);
      return { ids: response.body.data.subscribers.map((s: { id: string }) => s.id), total: response.body.data.total };
    };

    expect(await list('is_active=true')).toEqual({ ids: [safari.id, firefox.id, chrome.id], total: 3 });
    expect(await list('is_active=false')).toEqual({ ids: [gone.id], total: 1 });
    expect(await list('search=CHROME')).toEqual({ ids: [gone.id, chrome.id], total: 2 });
    expect(await list('search=chrome&is_active=true')).toEqual({ ids: [chrome.id], total: 1 });
    expect(await list('search=linux')).toEqual({ ids: [firefox.id], total: 1 });
    expect(await list('search=ios')).toEqual({ ids: [safari.id], total: 1 });
    expect(await list('search=gb')).toEqual({ ids: [chrome.id], total: 1 });
    expect(await list('search=united%20kingdom')).toEqual({ ids: [chrome.id], total: 1 });
    expect(await list('search=states&is_active=true')).toEqual({ ids: [safari.id, firefox.id], total: 2 });
    expect(await list('search=opera')).toEqual({ ids: [], total: 0 });
    // LIKE wildcards typed by the user are literal.
    expect(await list('search=%25')).toEqual({ ids: [], total: 0 });
    expect(await list('search=_')).toEqual({ ids: [], total: 0 });

    const page1 = await t.request('GET', `/api/sites/${site.id}/subscribers?limit=3&page=1`, { token: owner.token });
    const page2 = await t.request('GET', `/api/sites/${site.id}/subscribers?limit=3&page=2`, { token: owner.token });
    const page3 = await t.request('GET', `/api/sites/${site.id}/subscribers?limit=3&page=3`, { token: owner.token });
    expect(page1.body.data).toMatchObject({ total: 4, page: 1, limit: 3 });
    expect(page1.body.data.subscribers.map((s: { id: string }) => s.id)).toEqual([gone.id, safari.id, firefox.id]);
    expect(page2.body.data.subscribers.map((s: { id: string }) => s.id)).toEqual([chrome.id]);
    expect(page2.body.data.total).toBe(4);
    expect(page3.body.data.subscribers).toEqual([]);
  });

  it('refuses bad list queries with a clear 400', async () => {
    const site = await t.createSite(owner.token);
    const cases: Array<[string, RegExp]> = [
      ['limit=201', /limit must be at most 200/],
      ['limit=0', /limit must be 1 or more/],
      ['page=0', /page must be 1 or more/],
      ['page=abc', /page must be a number/],
      ['is_active=yes', /must be true or false/],
      [`search=${'x'.repeat(101)}`, /search must be at most 100 characters/],
    ];
    for (const [query, message] of cases) {
      const response = await t.request('GET', `/api/sites/${site.id}/subscribers?${query}`, { token: owner.token });
      expect(response.status, query).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }
    expect((await t.request('GET', `/api/sites/${site.id}/subscribers?limit=200`, { token: owner.token })).status).toBe(200);
  });

  it('gets one subscriber, and requires a session', async () => {
    const site = await t.createSite(owner.token);
    const added = await addSubscriber(site.id, UA.safariIos);
    const response = await t.request('GET', `/api/sites/${site.id}/subscribers/${added.id}`, { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body.data.subscriber).toMatchObject({ id: added.id, browser: 'Safari', os: 'iOS', is_active: true, tags: [] });
    for (const [method, url] of [
      ['GET', `/api/sites/${site.id}/subscribers`],
      ['GET', `/api/sites/${site.id}/subscribers/${added.id}`],
      ['DELETE', `/api/subscribers/${added.id}`],
      ['PATCH', `/api/subscribers/${added.id}/tags`],
    ] as const) {
      const anonymous = await t.request(method, url, method === 'PATCH' ? { body: { tags: [] } } : {});
      expect(anonymous.status, `${method} ${url}`).toBe(401);
    }
    expect(await activeCount(site.id)).toBe(1);
  });

  it('removes a subscriber by unsubscribing it: the row stays, inactive, counted once', async () => {
    const site = await t.createSite(owner.token);
    const added = await addSubscriber(site.id, UA.chromeWindows);
    await addSubscriber(site.id, UA.chromeWindows);
    expect(await activeCount(site.id)).toBe(2);

    const removed = await t.request('DELETE', `/api/subscribers/${added.id}`, { token: owner.token });
    expect(removed.status).toBe(200);
    expect(removed.body.data.subscriber).toMatchObject({ id: added.id, is_active: false, unsubscribed_at: new Date(clock.now()).toISOString() });
    expect(await activeCount(site.id)).toBe(1);
    const again = await t.request('DELETE', `/api/subscribers/${added.id}`, { token: owner.token });
    expect(again.status).toBe(200);
    expect(await activeCount(site.id)).toBe(1);
    const stats = await t.ctx.db.selectFrom('stats_hourly').select(['subscribed', 'unsubscribed']).where('site_id', '=', site.id).execute();
    expect(stats.reduce((n, r) => n + r.unsubscribed, 0)).toBe(1);
    expect((await t.request('GET', `/api/sites/${site.id}/subscribers/${added.id}`, { token: owner.token })).body.data.subscriber.is_active).toBe(false);
    expect((await t.request('DELETE', `/api/subscribers/no-such-id`, { token: owner.token })).status).toBe(404);
  });

  it('replaces tags: trimmed, de-duplicated, empty dropped, at most 50 of at most 64 characters', async () => {
    const site = await t.createSite(owner.token);
    const added = await addSubscriber(site.id, UA.chromeWindows);
    const first = await t.request('PATCH', `/api/subscribers/${added.id}/tags`, { token: owner.token, body: { tags: [' vip ', 'newsletter', 'vip', '', '  '] } });
    expect(first.status).toBe(200);
    expect(first.body.data.subscriber.tags).toEqual(['newsletter', 'vip']);
    const replaced = await t.request('PATCH', `/api/subscribers/${added.id}/tags`, { token: owner.token, body: { tags: ['buyer'] } });
    expect(replaced.body.data.subscriber.tags).toEqual(['buyer']);
    const stored = await t.ctx.db.selectFrom('subscriber_tags').selectAll().where('subscriber_id', '=', added.id).execute();
    expect(stored).toEqual([{ subscriber_id: added.id, site_id: site.id, tag: 'buyer' }]);
    const list = await t.request('GET', `/api/sites/${site.id}/subscribers`, { token: owner.token });
    expect(list.body.data.subscribers[0].tags).toEqual(['buyer']);

    const fifty = Array.from({ length: 50 }, (_, i) => `tag-${i}`);
    expect((await t.request('PATCH', `/api/subscribers/${added.id}/tags`, { token: owner.token, body: { tags: fifty } })).status).toBe(200);
    const bad: Array<[unknown, RegExp]> = [
      [{ tags: [...fifty, 'one-more'] }, /at most 50 tags/],
      [{ tags: ['x'.repeat(65)] }, /at most 64 characters/],
      [{ tags: 'vip' }, /tags must be a list/],
      [{ tags: [42] }, /each tag must be text/],
      // Exports join tags with "|" and imports split on it: such a tag would not survive the round trip.
      [{ tags: ['size|xl'] }, /a tag must not contain "\|" \(it separates tags in exports and imports\)/],
      [{}, /tags/],
    ];
    for (const [body, message] of bad) {
      const response = await t.request('PATCH', `/api/subscribers/${added.id}/tags`, { token: owner.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }
    expect((await t.request('PATCH', `/api/subscribers/${added.id}/tags`, { token: owner.token, body: { tags: [] } })).body.data.subscriber.tags).toEqual([]);
  });

  it('answers 404 for every id of another user, and changes nothing (tenancy matrix)', async () => {
    const alice = await t.createUser();
    const bob = await t.createUser();
    const aliceSite = await t.createSite(alice.token);
    const aliceOtherSite = await t.createSite(alice.token);
    const bobSite = await t.createSite(bob.token);
    const aliceSubscriber = await addSubscriber(aliceSite.id, UA.chromeWindows);
    const aliceOtherSubscriber = await addSubscriber(aliceOtherSite.id, UA.chromeWindows);
    const bobSubscriber = await addSubscriber(bobSite.id, UA.firefoxLinux);
    await t.request('PATCH', `/api/subscribers/${aliceSubscriber.id}/tags`, { token: alice.token, body: { tags: ['vip'] } });

    const snapshot = async () => ({
      subscribers: await t.ctx.db.selectFrom('subscribers').selectAll().orderBy('id').execute(),
      tags: await t.ctx.db.selectFrom('subscriber_tags').selectAll().orderBy('subscriber_id').orderBy('tag').execute(),
      sites: await t.ctx.db.selectFrom('sites').select(['id', 'active_subscriber_count']).orderBy('id').execute(),
      stats: await t.ctx.db.selectFrom('stats_hourly').selectAll().orderBy('site_id').orderBy('hour_start').execute(),
    });
    const before = await snapshot();

    const attempts: Array<[string, string, string, unknown?]> = [
      // Bob with Alice's ids.
      [bob.token, 'GET', `/api/sites/${aliceSite.id}/subscribers`],
      [bob.token, 'GET', `/api/sites/${aliceSite.id}/subscribers?is_active=false&search=chrome`],
      [bob.token, 'GET', `/api/sites/${aliceSite.id}/subscribers/${aliceSubscriber.id}`],
      [bob.token, 'GET', `/api/sites/${bobSite.id}/subscribers/${aliceSubscriber.id}`],
      [bob.token, 'GET', `/api/sites/${aliceSite.id}/subscribers/${bobSubscriber.id}`],
      [bob.token, 'DELETE', `/api/subscribers/${aliceSubscriber.id}`],
      [bob.token, 'PATCH', `/api/subscribers/${aliceSubscriber.id}/tags`, { tags: ['hijacked'] }],
      // Alice with Bob's ids.
      [alice.token, 'GET', `/api/sites/${bobSite.id}/subscribers`],
      [alice.token, 'GET', `/api/sites/${bobSite.id}/subscribers/${bobSubscriber.id}`],
      [alice.token, 'DELETE', `/api/subscribers/${bobSubscriber.id}`],
      [alice.token, 'PATCH', `/api/subscribers/${bobSubscriber.id}/tags`, { tags: [] }],
      // Alice mixing her own site with her own subscriber of another site.
      [alice.token, 'GET', `/api/sites/${aliceSite.id}/subscribers/${aliceOtherSubscriber.id}`],
    ];
    for (const [token, method, url, body] of attempts) {
      const response = await t.request(method, url, { token, ...(body !== undefined ? { body } : {}) });
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(response.body.success).toBe(false);
      expect(JSON.stringify(response.body)).not.toContain('Chrome');
    }
    expect(await snapshot()).toEqual(before);

    // The rightful owner still sees everything as it was.
    const own = await t.request('GET', `/api/sites/${aliceSite.id}/subscribers/${aliceSubscriber.id}`, { token: alice.token });
    expect(own.body.data.subscriber).toMatchObject({ is_active: true, tags: ['vip'] });
  });
});
