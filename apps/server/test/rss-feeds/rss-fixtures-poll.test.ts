import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { LocalFeedServer } from './local-feed-server';

// The 43 real-world fixtures, each served on 127.0.0.1 and checked through the
// real poll path (outbound client → parser → seen-items table): the first
// check records every item, and checking the same document again finds
// nothing new (item ids are stable across polls).
const fixturesDir = path.join(import.meta.dirname, '..', 'fixtures', 'feeds');
const manifest = fs
  .readFileSync(path.join(fixturesDir, 'MANIFEST.tsv'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const cells = line.split('\t');
    return { file: cells[0]!, itemCount: Number(cells[3]) };
  });

describe('every fixture through the poll path', () => {
  // "Check now" fetches a feed at most once a minute and one user checks 30 times an hour
  // (rss-feeds-limits.test.ts); here one user checks 43 feeds twice, the clock moving a minute between.
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  let server: LocalFeedServer;

  beforeAll(async () => {
    server = await LocalFeedServer.start();
    t = await createTestApp({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RSS_CHECKS_PER_USER_PER_HOUR: '1000' } });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Fixtures', url: 'https://fixtures.example' });
    for (const { file } of manifest) server.serve(`/${file}`, { body: fs.readFileSync(path.join(fixturesDir, file)), contentType: 'application/xml' });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it('serves all 43 fixtures', () => {
    expect(manifest).toHaveLength(43);
  });

  it.each(manifest.map((row) => [row.file, row.itemCount] as const))('%s: the first check records its %i items, the second finds none new', async (file, itemCount) => {
    const created = await t.request('POST', `/api/sites/${site.id}/rss-feeds`, { token: owner.token, body: { name: file.slice(0, 100), url: server.url(`/${file}`), maxPushesPerDay: 5 } });
    expect(created.status).toBe(201);
    const feedId = created.body.data.feed.id;

    const first = await t.request('POST', `/api/rss-feeds/${feedId}/check`, { token: owner.token });
    expect(first.status).toBe(200);
    expect(first.body.data.check).toMatchObject({ outcome: 'baseline', items_in_feed: itemCount, error: null });
    expect(first.body.data.feed.last_error).toBeNull();
    expect(first.body.data.feed.last_item_guid).toEqual(expect.any(String));
    const recorded = await t.ctx.db.selectFrom('rss_feed_items').select(['item_key', 'outcome']).where('feed_id', '=', feedId).execute();
    expect(recorded).toHaveLength(itemCount);
    expect(recorded.every((r) => r.outcome === 'baseline')).toBe(true);

    clock.advance(60_000);
    const second = await t.request('POST', `/api/rss-feeds/${feedId}/check`, { token: owner.token });
    expect(second.body.data.check).toMatchObject({ outcome: 'checked', items_in_feed: itemCount, new_items: 0, sent: 0, drafted: 0, skipped: 0 });
    expect(await t.ctx.db.selectFrom('notifications').select('id').where('site_id', '=', site.id).execute()).toEqual([]);
  });

  it('stores a clear error for a document that is not a feed, and never crashes on hostile XML', async () => {
    const cases: Array<[string, string, string]> = [
      ['/empty.xml', '', 'Feed is empty'],
      ['/page.html', '<!doctype html><html><head><link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body></body></html>', 'feed is at'],
      ['/json', '{"items":[]}', 'did not return an RSS or Atom feed'],
      [
        '/laughs.xml',
        '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><rss version="2.0"><channel><title>&b;</title><item><guid>1</guid><title>&b;</title></item></channel></rss>',
        '',
      ],
    ];
    for (const [pathname, body, message] of cases) {
      server.serve(pathname, { body, contentType: pathname.endsWith('.html') ? 'text/html' : 'application/xml' });
      const feed = (await t.request('POST', `/api/sites/${site.id}/rss-feeds`, { token: owner.token, body: { name: pathname, url: server.url(pathname) } })).body.data.feed;
      const checked = await t.request('POST', `/api/rss-feeds/${feed.id}/check`, { token: owner.token });
      expect(checked.status, pathname).toBe(200);
      if (message) {
        expect(checked.body.data.check.outcome).toBe('error');
        expect(checked.body.data.feed.last_error).toContain(message);
      } else {
        // Entities are never expanded: the item is recorded with its reference left as text.
        expect(checked.body.data.check).toMatchObject({ outcome: 'baseline', items_in_feed: 1 });
      }
    }
  });
});
