import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { LocalFeedServer, rssDocument } from './local-feed-server';

// Spec §7 RSS feeds through HTTP: create / list / get / edit / pause / delete,
// validation (§5), ownership (docs/security.md, tenancy) and "Check now" of an
// address the outbound policy refuses (no OUTBOUND_ALLOW_HOSTS here).
describe('RSS feeds API', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 0));
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  let feeds: LocalFeedServer;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Acme Blog', url: 'https://blog.acme.example' });
    feeds = await LocalFeedServer.start();
  });
  afterAll(async () => {
    await feeds.close();
    await t.close();
  });

  const createBody = (overrides: Record<string, unknown> = {}) => ({
    name: 'Acme posts',
    url: 'https://blog.acme.example/feed.xml',
    iconUrl: 'https://blog.acme.example/icon.png',
    utmParams: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'rss' },
    showActionButtons: true,
    createDraft: false,
    maxPushesPerDay: 3,
    segmentId: null,
    ...overrides,
  });

  it('creates a feed from the spec §3 payload and lists it as data.feeds', async () => {
    const created = await t.request('POST', `/api/sites/${site.id}/rss-feeds`, { token: owner.token, body: createBody() });
    expect(created.status).toBe(201);
    const feed = created.body.data.feed;
    expect(feed).toEqual({
      id: expect.any(String),
      site_id: site.id,
      name: 'Acme posts',
      url: 'https://blog.acme.example/feed.xml',
      icon_url: 'https://blog.acme.example/icon.png',
      utm_params: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'rss' },
      show_action_buttons: true,
      create_draft: false,
      max_pushes_per_day: 3,
      segment_id: null,
      is_active: true,
      last_fetched_at: null,
      last_item_guid: null,
      last_error: null,
      next_check_at: '2026-03-10T09:00:00.000Z',
      pushes_today: 0,
      skipped_today: 0,
      created_at: '2026-03-10T09:00:00.000Z',
      updated_at: '2026-03-10T09:00:00.000Z',
    });

    const list = await t.request('GET', `/api/sites/${site.id}/rss-feeds`, { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.feeds.map((f: any) => f.id)).toContain(feed.id);
    const one = await t.request('GET', `/api/rss-feeds/${feed.id}`, { token: owner.token });
    expect(one.body.data.feed).toEqual(feed);
  });

  it('fills in defaults for a minimal body and stores empty UTM values as null', async () => {
    const created = await t.request('POST', `/api/sites/${site.id}/rss-feeds`, {
      token: owner.token,
      body: { name: '  News ', url: 'http://news.example/rss', iconUrl: '', utmParams: { utm_source: '', utm_medium: 'push' } },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.feed).toMatchObject({
      name: 'News',
      icon_url: null,
      utm_params: { utm_source: null, utm_medium: 'push', utm_campaign: null },
      show_action_buttons: false,
      create_draft: false,
      max_pushes_per_day: 2,
      is_active: true,
    });
  });

  it('refuses what spec §5 forbids with a clear 400, and a segment that is not the site’s', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [createBody({ name: '' }), /Feed name is required/],
      [createBody({ name: undefined }), /Feed name is required/],
      [createBody({ url: '' }), /RSS feed URL is required/],
      [createBody({ url: 'javascript:alert(1)' }), /complete URL starting with https:\/\/ or http:\/\//],
      [createBody({ url: 'ftp://files.example/feed.xml' }), /complete URL/],
      [createBody({ maxPushesPerDay: 0 }), /at least 1/],
      [createBody({ maxPushesPerDay: 1.5 }), /whole number/],
      [createBody({ maxPushesPerDay: 'many' }), /must be a number/],
      [createBody({ iconUrl: 'javascript:alert(1)' }), /iconUrl/],
      [createBody({ utmParams: { utm_source: 'x'.repeat(101) } }), /at most 100/],
      [createBody({ segmentId: 'segment-of-someone' }), /^Segment not found$/],
    ];
    const before = await t.ctx.db.selectFrom('rss_feeds').select('id').execute();
    for (const [body, message] of cases) {
      const response = await t.request('POST', `/api/sites/${site.id}/rss-feeds`, { token: owner.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error.message).toMatch(message);
    }
    expect(await t.ctx.db.selectFrom('rss_feeds').select('id').execute()).toHaveLength(before.length);
    expect((await t.request('POST', `/api/sites/${site.id}/rss-feeds`, { body: createBody() })).status).toBe(401);
  });

  it('edits fields, pauses and activates with { is_active }, and a new address starts the feed over', async () => {
    const feed = (await t.request('POST', `/api/sites/${site.id}/rss-feeds`, { token: owner.token, body: createBody() })).body.data.feed;
    // Pretend a check happened, so a reset is visible.
    await t.ctx.db
      .updateTable('rss_feeds')
      .set({ baseline_recorded: 1, etag: '"v1"', last_item_guid: 'post-9', last_fetched_at: clock.now(), next_check_at: clock.now() + 900_000 })
      .where('id', '=', feed.id)
      .execute();

    clock.advance(60_000);
    const edited = await t.request('PATCH', `/api/rss-feeds/${feed.id}`, {
      token: owner.token,
      body: { name: 'Renamed', maxPushesPerDay: 1, createDraft: true, showActionButtons: false, utmParams: null, iconUrl: null },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.data.feed).toMatchObject({
      name: 'Renamed',
      max_pushes_per_day: 1,
      create_draft: true,
      show_action_buttons: false,
      icon_url: null,
      utm_params: { utm_source: null, utm_medium: null, utm_campaign: null },
      last_item_guid: 'post-9',
      updated_at: '2026-03-10T09:01:00.000Z',
    });

    const paused = await t.request('PATCH', `/api/rss-feeds/${feed.id}`, { token: owner.token, body: { is_active: false } });
    expect(paused.body.data.feed).toMatchObject({ is_active: false, next_check_at: null });
    expect((await t.request('POST', `/api/rss-feeds/${feed.id}/check`, { token: owner.token })).body.error.message).toBe(
      'This feed is paused. Activate it to check it.',
    );

    // Activating starts over: what was published while paused is recorded, not sent.
    const activated = await t.request('PATCH', `/api/rss-feeds/${feed.id}`, { token: owner.token, body: { is_active: true } });
    expect(activated.body.data.feed).toMatchObject({ is_active: true, next_check_at: '2026-03-10T09:01:00.000Z' });
    let row = await t.ctx.db.selectFrom('rss_feeds').selectAll().where('id', '=', feed.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ baseline_recorded: 0, etag: null });

    await t.ctx.db.updateTable('rss_feeds').set({ baseline_recorded: 1, etag: '"v2"', last_item_guid: 'post-10' }).where('id', '=', feed.id).execute();
    const moved = await t.request('PATCH', `/api/rss-feeds/${feed.id}`, { token: owner.token, body: { url: 'https://other.example/atom.xml' } });
    expect(moved.body.data.feed).toMatchObject({ url: 'https://other.example/atom.xml', last_item_guid: null, last_fetched_at: null });
    row = await t.ctx.db.selectFrom('rss_feeds').selectAll().where('id', '=', feed.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ baseline_recorded: 0, etag: null });

    for (const [body, message] of [
      [{ maxPushesPerDay: 0 }, /at least 1/],
      [{ url: 'not a url' }, /complete URL/],
      [{ name: ' ' }, /Feed name is required/],
      [{ site_id: 'elsewhere' }, /site_id|Unrecognized/i],
      [{ segmentId: 'nope' }, /^Segment not found$/],
    ] as const) {
      const response = await t.request('PATCH', `/api/rss-feeds/${feed.id}`, { token: owner.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }

    expect((await t.request('DELETE', `/api/rss-feeds/${feed.id}`, { token: owner.token })).body).toEqual({ success: true, data: { deleted: true } });
    expect((await t.request('GET', `/api/rss-feeds/${feed.id}`, { token: owner.token })).status).toBe(404);
  });

  it('stores a refused private address as the feed’s last error, without crashing (no OUTBOUND_ALLOW_HOSTS)', async () => {
    feeds.serve('/private.xml', { body: rssDocument([{ guid: 'a', title: 'A', link: 'https://blog.example/a' }]) });
    const feed = (await t.request('POST', `/api/sites/${site.id}/rss-feeds`, { token: owner.token, body: createBody({ url: feeds.url('/private.xml') }) })).body.data
      .feed;
    const checked = await t.request('POST', `/api/rss-feeds/${feed.id}/check`, { token: owner.token });
    expect(checked.status).toBe(200);
    expect(checked.body.data.check).toMatchObject({ outcome: 'error', new_items: 0, sent: 0, error: 'Feed address points to a private network address' });
    expect(checked.body.data.feed).toMatchObject({ last_error: 'Feed address points to a private network address', last_fetched_at: '2026-03-10T09:01:00.000Z' });
    expect(feeds.requestsTo('/private.xml')).toHaveLength(0);
    // The next check is scheduled at the normal interval, like any other.
    expect(checked.body.data.feed.next_check_at).toBe('2026-03-10T09:16:00.000Z');
  });

  it('answers 404 for every feed route with another user’s ids, and changes nothing (tenancy matrix)', async () => {
    const alice = await t.createUser();
    const bob = await t.createUser();
    const aliceSite = await t.createSite(alice.token);
    const bobSite = await t.createSite(bob.token);
    const aliceFeed = (await t.request('POST', `/api/sites/${aliceSite.id}/rss-feeds`, { token: alice.token, body: createBody({ name: 'Alice secret feed' }) })).body.data
      .feed;
    const bobFeed = (await t.request('POST', `/api/sites/${bobSite.id}/rss-feeds`, { token: bob.token, body: createBody({ name: 'Bob feed' }) })).body.data.feed;

    const snapshot = async () => ({
      feeds: await t.ctx.db.selectFrom('rss_feeds').selectAll().orderBy('id').execute(),
      items: await t.ctx.db.selectFrom('rss_feed_items').selectAll().orderBy('feed_id').orderBy('item_key').execute(),
      notifications: await t.ctx.db.selectFrom('notifications').select('id').orderBy('id').execute(),
    });
    const before = await snapshot();

    const attempts: Array<[string, string, string, unknown?]> = [
      [bob.token, 'GET', `/api/sites/${aliceSite.id}/rss-feeds`],
      [bob.token, 'POST', `/api/sites/${aliceSite.id}/rss-feeds`, createBody()],
      [bob.token, 'GET', `/api/rss-feeds/${aliceFeed.id}`],
      [bob.token, 'PATCH', `/api/rss-feeds/${aliceFeed.id}`, { is_active: false }],
      [bob.token, 'PATCH', `/api/rss-feeds/${aliceFeed.id}`, { name: 'hijacked', url: 'https://evil.example/feed' }],
      [bob.token, 'DELETE', `/api/rss-feeds/${aliceFeed.id}`],
      [bob.token, 'POST', `/api/rss-feeds/${aliceFeed.id}/check`],
      [alice.token, 'GET', `/api/sites/${bobSite.id}/rss-feeds`],
      [alice.token, 'GET', `/api/rss-feeds/${bobFeed.id}`],
      [alice.token, 'PATCH', `/api/rss-feeds/${bobFeed.id}`, { is_active: false }],
      [alice.token, 'DELETE', `/api/rss-feeds/${bobFeed.id}`],
      [alice.token, 'POST', `/api/rss-feeds/${bobFeed.id}/check`],
      [alice.token, 'GET', `/api/rss-feeds/no-such-feed`],
    ];
    for (const [token, method, url, body] of attempts) {
      const response = await t.request(method, url, { token, ...(body !== undefined ? { body } : {}) });
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(response.body.success).toBe(false);
      expect(JSON.stringify(response.body)).not.toContain('secret');
    }
    expect(await snapshot()).toEqual(before);
    expect((await t.request('GET', `/api/rss-feeds/${aliceFeed.id}`, { token: alice.token })).body.data.feed.name).toBe('Alice secret feed');
  });

  it('deleting a site deletes its feeds', async () => {
    const doomed = await t.createSite(owner.token, { name: 'Doomed' });
    const feed = (await t.request('POST', `/api/sites/${doomed.id}/rss-feeds`, { token: owner.token, body: createBody() })).body.data.feed;
    expect((await t.request('DELETE', `/api/sites/${doomed.id}`, { token: owner.token })).status).toBe(200);
    expect(await t.ctx.db.selectFrom('rss_feeds').select('id').where('id', '=', feed.id).execute()).toEqual([]);
  });
});
