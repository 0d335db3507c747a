import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { createTestApp, type TestApp, type TestResponse, type TestUser } from '../support/test-app';
import { LocalFeedServer, rssDocument } from './local-feed-server';

// docs/security.md "Abuse limits": "Check now" makes Herald fetch a URL the
// user chose, so it is limited per feed (once a minute) and per user
// (RSS_CHECKS_PER_USER_PER_HOUR, default 30); the number of feeds a user has
// over all their sites is limited (RSS_FEEDS_PER_USER, default 50). The
// counters live in the database, so they hold across processes, and are
// counted atomically, so parallel requests cannot slip past them.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const items = [{ guid: 'a', title: 'A', link: 'https://blog.example/a', description: 'A' }];

function expectRateLimited(response: TestResponse, message: RegExp, maxSeconds: number) {
  expect(response.status, JSON.stringify(response.body)).toBe(429);
  expect(response.body).toMatchObject({ success: false, error: { message: expect.stringMatching(message) } });
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
  return retryAfter;
}

describe('"Check now" limits', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 0));
  let t: TestApp;
  let server: LocalFeedServer;

  beforeAll(async () => {
    server = await LocalFeedServer.start();
    t = await createTestApp({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  async function ownerWithSite() {
    const user = await t.createUser();
    const site = await t.createSite(user.token, { name: 'Blog', url: 'https://blog.example' });
    return { user, site };
  }

  async function createFeed(user: TestUser, siteId: string, path: string) {
    server.serve(path, { body: rssDocument(items) });
    const created = await t.request('POST', `/api/sites/${siteId}/rss-feeds`, { token: user.token, body: { name: path, url: server.url(path) } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.feed as { id: string };
  }

  const check = (user: TestUser, feedId: string) => t.request('POST', `/api/rss-feeds/${feedId}/check`, { token: user.token });

  it('20 parallel clicks on one feed fetch it once; the others get 429 with Retry-After until the minute is over', async () => {
    const { user, site } = await ownerWithSite();
    const feed = await createFeed(user, site.id, '/burst.xml');

    const answers = await Promise.all(Array.from({ length: 20 }, () => check(user, feed.id)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(expectRateLimited(refused, /^This feed was checked less than a minute ago\. Try again in \d+ seconds?\.$/, 60)).toBe(60);
    }
    expect(server.requestsTo('/burst.xml')).toHaveLength(1);

    clock.advance(59_000);
    expectRateLimited(await check(user, feed.id), /Try again in 1 second\.$/, 1);
    clock.advance(1_000);
    expect((await check(user, feed.id)).status).toBe(200);
    expect(server.requestsTo('/burst.xml')).toHaveLength(2);
  });

  it('a feed whose address was just changed can be checked right away', async () => {
    const { user, site } = await ownerWithSite();
    const feed = await createFeed(user, site.id, '/old-address.xml');
    expect((await check(user, feed.id)).status).toBe(200);
    expect((await check(user, feed.id)).status).toBe(429);

    server.serve('/new-address.xml', { body: rssDocument(items) });
    expect((await t.request('PATCH', `/api/rss-feeds/${feed.id}`, { token: user.token, body: { url: server.url('/new-address.xml') } })).status).toBe(200);
    expect((await check(user, feed.id)).status).toBe(200);
    expect(server.requestsTo('/new-address.xml')).toHaveLength(1);
  });

  it('another user probing a feed id gets 404 and does not use up the owner\'s minute', async () => {
    const { user, site } = await ownerWithSite();
    const stranger = await t.createUser();
    const feed = await createFeed(user, site.id, '/probed.xml');
    for (let i = 0; i < 3; i += 1) expect((await check(stranger, feed.id)).status).toBe(404);
    expect((await check(user, feed.id)).status).toBe(200);
  });

  it('one user gets 30 checks an hour over all their feeds, then 429 naming the limit; the next hour they work again', async () => {
    const { user, site } = await ownerWithSite();
    const feeds = [];
    for (let i = 0; i < 31; i += 1) feeds.push(await createFeed(user, site.id, `/hourly-${i}.xml`));
    const before = server.requests.length;

    for (const feed of feeds.slice(0, 30)) expect((await check(user, feed.id)).status).toBe(200);
    const refused = await check(user, feeds[30]!.id);
    const retryAfter = expectRateLimited(refused, /^You have used all 30 feed checks of this hour\. Try again in 60 minutes\.$/, 3600);
    expect(retryAfter).toBe(3600);
    expect(server.requests.length - before).toBe(30);

    // Another user is not affected.
    const other = await ownerWithSite();
    const theirs = await createFeed(other.user, other.site.id, '/other-user.xml');
    expect((await check(other.user, theirs.id)).status).toBe(200);

    // Half a minute before the hour is over: still refused, and the refused click is not counted against the feed...
    clock.advance(HOUR - 30_000);
    expect(expectRateLimited(await check(user, feeds[30]!.id), /Try again in 1 minute\.$/, 30)).toBe(30);
    // ...so once the hour is over it can be checked at once, not a minute later.
    clock.advance(30_000);
    expect((await check(user, feeds[30]!.id)).status).toBe(200);
    expect((await check(user, feeds[0]!.id)).status).toBe(200);
  });
});

describe('RSS feeds per user', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = (user: TestUser, siteId: string, n: number) =>
    t.request('POST', `/api/sites/${siteId}/rss-feeds`, { token: user.token, body: { name: `Feed ${n}`, url: `https://blog.example/feed-${n}.xml` } });

  it('a user has at most 50 feeds over all their sites; the 51st answers 409 naming the limit, and deleting one makes room', async () => {
    const user = await t.createUser();
    const first = await t.createSite(user.token, { name: 'One', url: 'https://one.example' });
    const second = await t.createSite(user.token, { name: 'Two', url: 'https://two.example' });
    const ids: string[] = [];
    for (let n = 0; n < 50; n += 1) {
      const created = await create(user, n < 25 ? first.id : second.id, n);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      ids.push(created.body.data.feed.id);
    }
    const refused = await create(user, second.id, 50);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      success: false,
      error: expect.objectContaining({ message: 'You can have at most 50 RSS feeds over all your sites. Delete a feed to add another.' }),
    });
    const third = await t.createSite(user.token, { name: 'Three', url: 'https://three.example' });
    expect((await create(user, third.id, 51)).status).toBe(409);

    // Someone else's feeds do not count.
    const other = await t.createUser();
    expect((await create(other, (await t.createSite(other.token)).id, 0)).status).toBe(201);

    expect((await t.request('DELETE', `/api/rss-feeds/${ids[0]}`, { token: user.token })).status).toBe(200);
    expect((await create(user, third.id, 52)).status).toBe(201);
    expect((await create(user, third.id, 53)).status).toBe(409);
  });

  it('parallel creates cannot pass the limit (RSS_FEEDS_PER_USER=10, 25 at once)', async () => {
    const small = await createTestApp({ env: { RSS_FEEDS_PER_USER: '10' } });
    try {
      const user = await small.createUser();
      const sites = [await small.createSite(user.token, { name: 'A', url: 'https://a.example' }), await small.createSite(user.token, { name: 'B', url: 'https://b.example' })];
      const answers = await Promise.all(
        Array.from({ length: 25 }, (_, n) =>
          small.request('POST', `/api/sites/${sites[n % 2].id}/rss-feeds`, { token: user.token, body: { name: `Feed ${n}`, url: `https://blog.example/${n}.xml` } }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
      const refused = answers.filter((a) => a.status !== 201);
      expect(refused).toHaveLength(15);
      for (const answer of refused) expect(answer.body.error.message).toBe('You can have at most 10 RSS feeds over all your sites. Delete a feed to add another.');
      const listed = await Promise.all(sites.map((site) => small.request('GET', `/api/sites/${site.id}/rss-feeds`, { token: user.token })));
      expect(listed.reduce((sum, list) => sum + list.body.data.feeds.length, 0)).toBe(10);
    } finally {
      await small.close();
    }
  });
});
