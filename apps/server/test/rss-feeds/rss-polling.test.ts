import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { featureDueWorkSources } from '../../src/engine';
import { Scheduler } from '../../src/jobs/scheduler';
import { FEED_ACCEPT_HEADER } from '../../src/features/rss-feeds/feed-parser';
import { ManualClock } from '../../src/platform/clock';
import { createDeliveryHarness, type DeliveryHarness } from '../support/delivery-harness';
import { waitFor } from '../support/test-app';
import { LocalFeedServer, rssDocument, rssItemXml, type TestItem } from './local-feed-server';

// Issue 4 §5/§6: feeds polled on the scheduler's clock through the real
// outbound client (a feed server on 127.0.0.1, allowed by OUTBOUND_ALLOW_HOSTS),
// sent through the real engine to the local push service, which decrypts
// every payload.
const MINUTE = 60_000;
const INTERVAL = 15 * MINUTE;
const fixturesDir = path.join(import.meta.dirname, '..', 'fixtures', 'feeds');

describe('RSS feed polling', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 14, 0));
  let h: DeliveryHarness;
  let server: LocalFeedServer;
  let subscriptions: string[];

  beforeAll(async () => {
    server = await LocalFeedServer.start();
    // The scheduler's own timer stays out of the way (10 minutes): the test ticks it, and a
    // poll that creates a send must wake it (as in production, where a tick is a second away).
    h = await createDeliveryHarness({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1', SCHEDULER_INTERVAL_MS: '600000' } });
    subscriptions = [];
    for (let i = 0; i < 3; i++) subscriptions.push((await h.subscribe()).subscription.id);
  });
  afterAll(async () => {
    await h?.close();
    await server?.close();
  });

  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body !== undefined ? { body } : {}) });
  const feedRow = (id: string) => h.t.ctx.db.selectFrom('rss_feeds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const rssNotifications = () => h.t.ctx.db.selectFrom('notifications').selectAll().where('source', '=', 'rss').orderBy('created_at').execute();
  const pushesOf = (notificationId: string) => h.push.messages.filter((m) => (m.payload as any).tag === `herald-${notificationId}`);

  async function createFeed(pathname: string, overrides: Record<string, unknown> = {}) {
    const response = await api('POST', `/api/sites/${h.site.id}/rss-feeds`, {
      name: 'Acme Blog',
      url: server.url(pathname),
      iconUrl: 'https://blog.example/icon.png',
      utmParams: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'rss' },
      showActionButtons: true,
      createDraft: false,
      maxPushesPerDay: 5,
      segmentId: null,
      ...overrides,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body.data.feed;
  }

  /** Ticks the scheduler and waits until the feed's check at the current time has finished. */
  async function tickUntilChecked(feedId: string) {
    const at = clock.now();
    await h.engine.scheduler!.tick();
    await waitFor(async () => {
      const row = await feedRow(feedId);
      return row.last_fetched_at === at && row.poll_lease_until === null;
    });
  }

  /** Waits until every send the feeds started has finished. */
  async function sendsSettled() {
    await waitFor(async () => (await rssNotifications()).every((n) => n.status !== 'sending'), { timeoutMs: 15_000 });
  }

  const baseItems: TestItem[] = [
    { guid: 'post-3', title: 'Third post', link: 'https://blog.example/3', description: 'Three', pubDate: new Date(Date.UTC(2026, 2, 9)) },
    { guid: 'post-2', title: 'Second post', link: 'https://blog.example/2', description: 'Two', pubDate: new Date(Date.UTC(2026, 2, 8)) },
    { guid: 'post-1', title: 'First post', link: 'https://blog.example/1', description: 'One', pubDate: new Date(Date.UTC(2026, 2, 7)) },
  ];

  it('records the feed on the first poll, sends a new item exactly once, and never again when reordered, retitled or not modified', async () => {
    server.serve('/blog.xml', { body: rssDocument(baseItems), etag: '"v1"' });
    const feed = await createFeed('/blog.xml');
    await tickUntilChecked(feed.id);

    // First poll: where the feed stands, nothing sent.
    expect(await rssNotifications()).toEqual([]);
    expect(h.push.messages).toHaveLength(0);
    const seen = await h.t.ctx.db.selectFrom('rss_feed_items').select(['item_id', 'outcome']).where('feed_id', '=', feed.id).orderBy('item_id').execute();
    expect(seen).toEqual([
      { item_id: 'post-1', outcome: 'baseline' },
      { item_id: 'post-2', outcome: 'baseline' },
      { item_id: 'post-3', outcome: 'baseline' },
    ]);
    const first = server.requestsTo('/blog.xml')[0]!;
    expect(first.headers['if-none-match']).toBeUndefined();
    expect(first.headers.accept).toBe(FEED_ACCEPT_HEADER);
    const afterBaseline = (await api('GET', `/api/rss-feeds/${feed.id}`)).body.data.feed;
    expect(afterBaseline).toMatchObject({ last_fetched_at: '2026-03-10T14:00:00.000Z', last_item_guid: 'post-3', last_error: null, next_check_at: '2026-03-10T14:15:00.000Z' });

    // A new post with a long title, an HTML summary, a link with its own query and an image.
    const newPost: TestItem = {
      guid: 'post-4',
      title: 'Seventeen remarkable things we learned while rebuilding our checkout',
      link: 'https://blog.example/4?ref=feed',
      description: `<p>${'We rebuilt the checkout. '.repeat(12)}</p>`,
      pubDate: new Date(Date.UTC(2026, 2, 10, 14, 5)),
      image: 'https://blog.example/img/4.jpg',
    };
    server.serve('/blog.xml', { body: rssDocument([newPost, ...baseItems]), etag: '"v2"' });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    expect(server.requestsTo('/blog.xml').at(-1)!.headers['if-none-match']).toBe('"v1"');
    await sendsSettled();

    const [notification] = await rssNotifications();
    expect(notification).toMatchObject({ type: 'ONE_TIME', source: 'rss', status: 'completed', sent_count: 3 });
    const pushes = pushesOf(notification!.id);
    expect(pushes.map((p) => p.subscriptionId).sort()).toEqual([...subscriptions].sort());
    const payload = pushes[0]!.payload as any;
    expect(payload.title).toBe('Seventeen remarkable things we learned while…');
    expect(payload.title.length).toBeLessThanOrEqual(50);
    expect(payload.body.length).toBeLessThanOrEqual(150);
    expect(payload.body).toMatch(/^We rebuilt the checkout\. We rebuilt .*…$/);
    expect(payload.url).toBe('https://blog.example/4?ref=feed&utm_source=herald&utm_medium=push&utm_campaign=rss');
    expect(payload.image).toBe('https://blog.example/img/4.jpg');
    expect(payload.icon).toBe('https://blog.example/icon.png');
    expect(payload.actions).toEqual([
      { action: 'action-1', title: 'Read more', url: payload.url },
      { action: 'action-2', title: 'Visit site', url: 'https://blog.example/?utm_source=herald&utm_medium=push&utm_campaign=rss' },
    ]);
    const run = await h.t.ctx.db.selectFrom('notification_runs').selectAll().where('notification_id', '=', notification!.id).executeTakeFirstOrThrow();
    expect(run.dedupe_key).toMatch(new RegExp(`^rss:${feed.id}:[0-9a-f]{64}$`));
    expect((await api('GET', `/api/rss-feeds/${feed.id}`)).body.data.feed).toMatchObject({ last_item_guid: 'post-4', pushes_today: 1, skipped_today: 0 });

    // The same post again: moved down, retitled, under a new ETag. Nothing is sent.
    server.serve('/blog.xml', { body: rssDocument([baseItems[0]!, { ...newPost, title: 'A better title' }, baseItems[1]!, baseItems[2]!]), etag: '"v3"' });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    await sendsSettled();
    expect(await rssNotifications()).toHaveLength(1);
    expect(h.push.messages).toHaveLength(3);

    // Unchanged: the conditional GET gets 304 and nothing is created.
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    const last = server.requestsTo('/blog.xml').at(-1)!;
    expect(last).toMatchObject({ status: 304 });
    expect(last.headers['if-none-match']).toBe('"v3"');
    expect(await rssNotifications()).toHaveLength(1);
    expect((await feedRow(feed.id)).last_error).toBeNull();
    expect(h.push.messages).toHaveLength(3);

    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });

  it('saves drafts instead of sending when createDraft is on', async () => {
    server.serve('/drafts.xml', { body: rssDocument(baseItems) });
    const feed = await createFeed('/drafts.xml', { createDraft: true, showActionButtons: false });
    await tickUntilChecked(feed.id);
    const before = (await rssNotifications()).length;

    const fresh = [
      { guid: 'draft-b', title: 'Draft B', link: 'https://blog.example/b', description: 'B', pubDate: new Date(Date.UTC(2026, 2, 10, 14, 50)) },
      { guid: 'draft-a', title: 'Draft A', link: 'https://blog.example/a', description: 'A', pubDate: new Date(Date.UTC(2026, 2, 10, 14, 40)) },
    ];
    server.serve('/drafts.xml', { body: rssDocument([...fresh, ...baseItems]) });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);

    const drafts = (await rssNotifications()).slice(before);
    expect(drafts.map((n) => [n.title, n.status, n.actions])).toEqual(
      expect.arrayContaining([
        ['Draft A', 'draft', null],
        ['Draft B', 'draft', null],
      ]),
    );
    expect(drafts).toHaveLength(2);
    expect(await h.t.ctx.db.selectFrom('notification_runs').select('id').where('notification_id', 'in', drafts.map((d) => d.id)).execute()).toEqual([]);
    expect(h.push.messages).toHaveLength(3);
    // A draft is an ordinary notification: the owner can send it from the list.
    const listed = await api('GET', `/api/sites/${h.site.id}/notifications?status=draft`);
    expect(listed.body.data.notifications.map((n: any) => n.id)).toEqual(expect.arrayContaining(drafts.map((d) => d.id)));
    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });

  it("honours the daily maximum across polls, newest first, and starts again on the site's next local day", async () => {
    expect((await api('PATCH', `/api/sites/${h.site.id}`, { settings: { timezone: 'America/New_York' } })).status).toBe(200);
    clock.set(Date.UTC(2026, 2, 11, 1, 0)); // 21:00 on 10 March in New York
    server.serve('/daily.xml', { body: rssDocument(baseItems) });
    const feed = await createFeed('/daily.xml', { maxPushesPerDay: 2 });
    await tickUntilChecked(feed.id);
    const before = (await rssNotifications()).length;

    const burst = [1, 2, 3].map((n) => ({
      guid: `burst-${n}`,
      title: `Burst ${n}`,
      link: `https://blog.example/burst-${n}`,
      description: `Burst ${n}`,
      pubDate: new Date(Date.UTC(2026, 2, 11, 1, n)),
    }));
    server.serve('/daily.xml', { body: rssDocument([burst[0]!, burst[2]!, burst[1]!, ...baseItems]) });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    await sendsSettled();
    let sent = (await rssNotifications()).slice(before);
    expect(sent.map((n) => n.title).sort()).toEqual(['Burst 2', 'Burst 3']);
    expect((await api('GET', `/api/rss-feeds/${feed.id}`)).body.data.feed).toMatchObject({ pushes_today: 2, skipped_today: 1 });
    const skipped = await h.t.ctx.db.selectFrom('rss_feed_items').select(['item_id', 'outcome']).where('feed_id', '=', feed.id).where('outcome', '=', 'skipped').execute();
    expect(skipped).toEqual([{ item_id: 'burst-1', outcome: 'skipped' }]);

    // Same local day: over the maximum, nothing more is sent.
    const late = { guid: 'late', title: 'Late post', link: 'https://blog.example/late', description: 'Late', pubDate: new Date(Date.UTC(2026, 2, 11, 1, 20)) };
    server.serve('/daily.xml', { body: rssDocument([late, ...burst, ...baseItems]) });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    await sendsSettled();
    expect((await rssNotifications()).slice(before)).toHaveLength(2);

    // 00:30 on 11 March in New York — still the same UTC day as the sends above.
    clock.set(Date.UTC(2026, 2, 11, 4, 30));
    const morning = { guid: 'morning', title: 'Morning post', link: 'https://blog.example/morning', description: 'New day', pubDate: new Date(Date.UTC(2026, 2, 11, 4, 25)) };
    server.serve('/daily.xml', { body: rssDocument([morning, late, ...burst, ...baseItems]) });
    await tickUntilChecked(feed.id);
    await sendsSettled();
    sent = (await rssNotifications()).slice(before);
    expect(sent.map((n) => n.title)).toContain('Morning post');
    expect(sent).toHaveLength(3);
    expect((await api('GET', `/api/rss-feeds/${feed.id}`)).body.data.feed).toMatchObject({ pushes_today: 1, skipped_today: 0 });
    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });

  it('recognises items of a feed without guids (a real fixture) and does not resend one whose title changed', async () => {
    const fixture = fs.readFileSync(path.join(fixturesDir, 'rss2-bom-no-guid-donthitsave.xml'), 'utf8');
    server.serve('/comic.xml', { body: fixture, contentType: 'application/rss+xml' });
    const feed = await createFeed('/comic.xml', { utmParams: null, showActionButtons: false });
    await tickUntilChecked(feed.id);
    expect(await h.t.ctx.db.selectFrom('rss_feed_items').select('item_key').where('feed_id', '=', feed.id).execute()).toHaveLength(10);
    const before = (await rssNotifications()).length;

    const withNew = (title: string) => {
      const at = fixture.indexOf('<item>');
      const item = rssItemXml({ title, link: 'https://donthitsave.com/comic/2019/05/31/new-strip', description: '<p>A brand new strip.</p>' });
      return fixture.slice(0, at) + item + fixture.slice(at);
    };
    server.serve('/comic.xml', { body: withNew('New Strip'), contentType: 'application/rss+xml' });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    await sendsSettled();
    const created = (await rssNotifications()).slice(before);
    expect(created.map((n) => [n.title, n.message, n.destination_url])).toEqual([['New Strip', 'A brand new strip.', 'https://donthitsave.com/comic/2019/05/31/new-strip']]);
    expect(pushesOf(created[0]!.id)).toHaveLength(3);

    server.serve('/comic.xml', { body: withNew('New Strip (fixed typo)'), contentType: 'application/rss+xml' });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    await sendsSettled();
    expect((await rssNotifications()).slice(before)).toHaveLength(1);
    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });

  it('stores HTTP errors and unreadable documents as last_error, keeps retrying at the interval, and recovers', async () => {
    server.serve('/flaky.xml', { status: 500, body: 'oops', contentType: 'text/plain' });
    const feed = await createFeed('/flaky.xml');
    await tickUntilChecked(feed.id);
    let shown = (await api('GET', `/api/rss-feeds/${feed.id}`)).body.data.feed;
    expect(shown.last_error).toMatch(/^Feed server answered HTTP 500 Internal Server Error/);
    expect(shown.last_item_guid).toBeNull();

    server.serve('/flaky.xml', { body: '<!doctype html><html><head><title>Blog</title></head><body>Hi</body></html>', contentType: 'text/html' });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    shown = (await api('GET', `/api/rss-feeds/${feed.id}`)).body.data.feed;
    expect(shown.last_error).toBe('This address is a web page, not an RSS or Atom feed');

    server.serve('/flaky.xml', { status: 404, body: 'gone', contentType: 'text/plain' });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    expect((await feedRow(feed.id)).last_error).toMatch(/^Feed server answered HTTP 404 Not Found: there is no feed at this address/);
    expect(server.requestsTo('/flaky.xml')).toHaveLength(3);

    // Working again: the first successful poll only records, as for a new feed.
    server.serve('/flaky.xml', { body: rssDocument(baseItems) });
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    const row = await feedRow(feed.id);
    expect(row).toMatchObject({ last_error: null, baseline_recorded: 1, last_item_guid: 'post-3' });
    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });

  it('"Check now" polls immediately and answers what happened', async () => {
    server.serve('/now.xml', { body: rssDocument(baseItems), etag: '"n1"' });
    const feed = await createFeed('/now.xml', { showActionButtons: false });
    await tickUntilChecked(feed.id);

    const fresh = { guid: 'now-1', title: 'Breaking', link: 'https://blog.example/now-1', description: 'Right now', pubDate: new Date(clock.now()) };
    server.serve('/now.xml', { body: rssDocument([fresh, ...baseItems]), etag: '"n2"' });
    clock.advance(MINUTE);
    const checked = await api('POST', `/api/rss-feeds/${feed.id}/check`);
    expect(checked.status).toBe(200);
    expect(checked.body.data.check).toMatchObject({
      outcome: 'checked',
      items_in_feed: 4,
      new_items: 1,
      sent: 1,
      drafted: 0,
      skipped: 0,
      error: null,
      summary: '1 new item: 1 notification sent.',
    });
    const [notificationId] = checked.body.data.check.notification_ids;
    expect(checked.body.data.feed).toMatchObject({ last_item_guid: 'now-1', pushes_today: 1, next_check_at: new Date(clock.now() + INTERVAL).toISOString() });
    await h.waitForStatus(notificationId, ['completed']);
    expect(pushesOf(notificationId)).toHaveLength(3);
    expect((pushesOf(notificationId)[0]!.payload as any)).toMatchObject({ title: 'Breaking', body: 'Right now' });

    // "Check now" fetches a feed at most once a minute (rss-feeds-limits.test.ts).
    clock.advance(MINUTE);
    const again = await api('POST', `/api/rss-feeds/${feed.id}/check`);
    expect(again.body.data.check).toMatchObject({ outcome: 'not_modified', new_items: 0, sent: 0 });
    expect(again.body.data.check.summary).toMatch(/304 Not Modified/);
    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });

  it('polls a feed once when two schedulers tick together, and once after a clock jump of several intervals', async () => {
    server.serve('/race.xml', { body: rssDocument(baseItems) });
    const feed = await createFeed('/race.xml', { showActionButtons: false });
    await tickUntilChecked(feed.id);
    const second = new Scheduler(h.t.ctx, h.engine.queue, featureDueWorkSources(h.t.ctx, h.engine.queue));
    const third = new Scheduler(h.t.ctx, h.engine.queue, featureDueWorkSources(h.t.ctx, h.engine.queue));
    const fresh = { guid: 'race-1', title: 'Race', link: 'https://blog.example/race', description: 'Once', pubDate: new Date(clock.now()) };
    server.serve('/race.xml', { body: rssDocument([fresh, ...baseItems]) });
    const requestsBefore = server.requestsTo('/race.xml').length;
    const notificationsBefore = (await rssNotifications()).length;

    clock.advance(INTERVAL);
    await Promise.all([h.engine.scheduler!.tick(), second.tick(), third.tick()]);
    await waitFor(async () => (await feedRow(feed.id)).last_fetched_at === clock.now());
    await sendsSettled();
    await new Promise((r) => setTimeout(r, 300));
    expect(server.requestsTo('/race.xml').length - requestsBefore).toBe(1);
    const created = (await rssNotifications()).slice(notificationsBefore);
    expect(created).toHaveLength(1);
    expect(pushesOf(created[0]!.id)).toHaveLength(3);

    clock.advance(4 * INTERVAL);
    await Promise.all([h.engine.scheduler!.tick(), second.tick()]);
    await waitFor(async () => (await feedRow(feed.id)).last_fetched_at === clock.now());
    await new Promise((r) => setTimeout(r, 200));
    expect(server.requestsTo('/race.xml').length - requestsBefore).toBe(2);
    expect((await feedRow(feed.id)).next_check_at).toBe(clock.now() + INTERVAL);
    await api('DELETE', `/api/rss-feeds/${feed.id}`);
  });

  it('sends an item whose guid the document repeats once (a reused guid, a duplicated item)', async () => {
    server.serve('/repeats.xml', { body: rssDocument(baseItems) });
    const feed = await createFeed('/repeats.xml');
    await tickUntilChecked(feed.id);
    const reused = { guid: 'post-9', title: 'Ninth post', link: 'https://blog.example/9', description: 'Nine', pubDate: new Date(Date.UTC(2026, 2, 10)) };
    const sameGuidOtherPost = { ...reused, title: 'Ninth post, again', link: 'https://blog.example/9b', description: 'Nine b' };
    server.serve('/repeats.xml', { body: rssDocument([reused, reused, sameGuidOtherPost, ...baseItems]) });
    const before = (await rssNotifications()).length;
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    await sendsSettled();
    const created = (await rssNotifications()).slice(before);
    expect(created.map((n) => n.title)).toEqual(['Ninth post']);
    expect(pushesOf(created[0]!.id)).toHaveLength(subscriptions.length);
    clock.advance(INTERVAL);
    await tickUntilChecked(feed.id);
    await sendsSettled();
    expect((await rssNotifications()).length).toBe(before + 1);
  });
});
