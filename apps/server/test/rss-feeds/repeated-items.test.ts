import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { createDeliveryHarness, type DeliveryHarness } from '../support/delivery-harness';
import { waitFor } from '../support/test-app';
import { LocalFeedServer, rssDocument, type TestItem } from './local-feed-server';

// An item without a guid listed twice in one document is one item (docs/
// security.md, "Feeds": a repeated item never sends twice): its id is what it
// says, so the second listing is the first one again.
const MINUTE = 60_000;
const INTERVAL = 15 * MINUTE;

describe('RSS feeds: an item listed twice', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 14, 0));
  let h: DeliveryHarness;
  let server: LocalFeedServer;

  beforeAll(async () => {
    server = await LocalFeedServer.start();
    h = await createDeliveryHarness({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1', SCHEDULER_INTERVAL_MS: '600000' } });
    for (let i = 0; i < 2; i++) await h.subscribe();
  });
  afterAll(async () => {
    await h?.close();
    await server?.close();
  });

  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body !== undefined ? { body } : {}) });
  const feedRow = (id: string) => h.t.ctx.db.selectFrom('rss_feeds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const rssNotifications = () => h.t.ctx.db.selectFrom('notifications').selectAll().where('source', '=', 'rss').orderBy('created_at').execute();

  async function createFeed(pathname: string, overrides: Record<string, unknown> = {}) {
    const response = await api('POST', `/api/sites/${h.site.id}/rss-feeds`, { name: 'Repeating Blog', url: server.url(pathname), createDraft: false, maxPushesPerDay: 10, segmentId: null, ...overrides });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body.data.feed;
  }

  async function tickUntilChecked(feedId: string) {
    const at = clock.now();
    await h.engine.scheduler!.tick();
    await waitFor(async () => {
      const row = await feedRow(feedId);
      return row.last_fetched_at === at && row.poll_lease_until === null;
    });
  }

  const base: TestItem[] = [
    { title: 'Second post', link: 'https://blog.example/2', description: 'Two', pubDate: new Date(Date.UTC(2026, 2, 8)) },
    { title: 'First post', link: 'https://blog.example/1', description: 'One', pubDate: new Date(Date.UTC(2026, 2, 7)) },
  ];

  it('a new item without a guid that the document lists twice (same link, title, date) is sent once', async () => {
    server.serve('/noguid-dup.xml', { body: rssDocument(base) });
    const feed = await createFeed('/noguid-dup.xml');
    await tickUntilChecked(feed.id);
    const before = (await rssNotifications()).length;
    const fresh: TestItem = { title: 'Third post', link: 'https://blog.example/3', description: 'Three', pubDate: new Date(Date.UTC(2026, 2, 10, 13)) };
    server.serve('/noguid-dup.xml', { body: rssDocument([fresh, fresh, ...base]) });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    const created = (await rssNotifications()).slice(before);
    expect(created.map((n) => n.title)).toEqual(['Third post']);
    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });
});
