import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { createDeliveryHarness, type DeliveryHarness } from '../support/delivery-harness';
import { waitFor } from '../support/test-app';
import { Canary } from './support/fixtures';

// docs/security.md, "Untrusted content" › "Feeds": no DTD or entity expansion, a
// byte cap (also after gzip), a time cap and an item cap, each answered with
// a clear last_error or a cap, while the poller keeps checking the other
// feeds and the process's memory stays bounded. Driven through the real
// scheduler, poll job and outbound client against a local feed server.

const MINUTE = 60_000;
const MB = 1024 * 1024;

const channel = (items: string, head = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n${head}<rss version="2.0"><channel><title>Feed</title><link>https://feeds.example/</link><description>d</description>${items}</channel></rss>`;
const item = (guid: string, title: string, extra = '') => `<item><guid isPermaLink="false">${guid}</guid><title>${title}</title><link>https://feeds.example/${guid}</link>${extra}</item>`;

/** Ten entities, each ten of the one before: 10^9 "lol"s if expanded (3 GB). */
const BILLION_LAUGHS_DTD = [
  '<!DOCTYPE rss [',
  '<!ENTITY lol "lol">',
  ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`),
  ']>',
].join('\n');

describe('hostile feeds', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8, 0));
  let h: DeliveryHarness;
  let feeds: Canary;
  /** Where external entities and DTDs point: must never be asked for anything. */
  let entityTarget: Canary;
  let phase = 1;
  const trickleTimers = new Set<NodeJS.Timeout>();
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    feeds = await Canary.start('127.0.0.1');
    entityTarget = await Canary.start('127.0.0.1');
    const et = entityTarget.origin;
    const xml = (body: string | Buffer, headers: Record<string, string> = {}): Parameters<Canary['on']>[1] => (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/rss+xml', ...headers });
      response.end(body);
    };

    feeds.on('/good.xml', (request, response) =>
      xml(channel(phase === 1 ? item('g-1', 'Old post') : item('g-2', phase === 2 ? 'Fresh post' : 'Fresh post, retitled') + item('g-1', 'Old post, edited')))(request, response),
    );
    feeds.on('/laughs.xml', (request, response) =>
      xml(channel(phase === 1 ? item('l-0', 'Before') : item('l-1', '&lol9;', '<description>&lol9;&lol9;</description>'), BILLION_LAUGHS_DTD))(request, response),
    );
    const xxeDtd = [
      '<!DOCTYPE rss [',
      '<!ENTITY passwd SYSTEM "file:///etc/passwd">',
      `<!ENTITY remote SYSTEM "${et}/entity">`,
      `<!ENTITY % dtd SYSTEM "${et}/evil.dtd"> %dtd;`,
      ']>',
    ].join('\n');
    feeds.on('/xxe.xml', (request, response) =>
      xml(channel(phase === 1 ? item('x-0', 'Before') : item('x-1', 'Leak &passwd;&remote;', '<description>&remote;</description>'), xxeDtd))(request, response),
    );
    feeds.on('/external-dtd.xml', xml(channel(item('d-1', 'Doc with external DTD &ent;'), `<!DOCTYPE rss SYSTEM "${et}/rss.dtd">`)));

    const huge = Buffer.from(channel(item('h-1', 'Huge', `<description>${'x'.repeat(6 * MB)}</description>`)));
    feeds.on('/huge.xml', xml(huge, { 'content-length': String(huge.length) }));
    feeds.on('/huge-chunked.xml', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/rss+xml' }); // no Content-Length: chunked
      for (let i = 0; i < 6; i++) response.write(huge.subarray(i * MB, (i + 1) * MB));
      response.end(huge.subarray(6 * MB));
    });

    // A gzip bomb: 128 gzip members of 8 MB of zeros each, 1 GB once decoded, about 1 MB on the wire.
    const member = zlib.gzipSync(Buffer.alloc(8 * MB), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 128 }, () => member));
    feeds.on('/bomb.xml', xml(bomb, { 'content-encoding': 'gzip', 'content-length': String(bomb.length) }));

    // 100,000 items in 2.9 MB: under the byte cap, far over the item cap.
    const many = channel(Array.from({ length: 100_000 }, (_, i) => `<item><guid>${i}</guid></item>`).join(''));
    feeds.on('/many.xml', xml(many));

    // Headers at once, then a byte every 200 ms for ever.
    feeds.on('/trickle.xml', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/rss+xml' });
      response.write('<?xml version="1.0"?><rss version="2.0"><channel>');
      const timer = setInterval(() => response.write(' '), 200);
      trickleTimers.add(timer);
      response.on('close', () => {
        clearInterval(timer);
        trickleTimers.delete(timer);
      });
    });

    h = await createDeliveryHarness({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1', SCHEDULER_INTERVAL_MS: '600000' } });
    for (const name of ['good', 'laughs', 'xxe', 'external-dtd', 'huge', 'huge-chunked', 'bomb', 'many', 'trickle']) {
      const created = await h.t.request('POST', `/api/sites/${h.site.id}/rss-feeds`, {
        token: h.owner.token,
        body: { name, url: feeds.url(`/${name}.xml`), createDraft: true, maxPushesPerDay: 10 },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      ids[name] = created.body.data.feed.id;
    }
  });
  afterAll(async () => {
    for (const timer of trickleTimers) clearInterval(timer);
    await h?.close();
    await feeds?.close();
    await entityTarget?.close();
  });

  const feedRow = (name: string) => h.t.ctx.db.selectFrom('rss_feeds').selectAll().where('id', '=', ids[name]!).executeTakeFirstOrThrow();
  const checkedAt = async (name: string, at: number) => {
    const row = await feedRow(name);
    return row.last_fetched_at === at && row.poll_lease_until === null ? row : undefined;
  };

  it('refuses or caps each hostile feed with a clear last_error, keeps checking the others, and keeps memory bounded', async () => {
    let peakRss = process.memoryUsage().rss;
    const baseRss = peakRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 10);
    try {
      const at = clock.now();
      const started = Date.now();
      await h.engine.scheduler!.tick();

      // Every feed but the trickling one is done well before the trickling one's 10 s deadline.
      const others = ['good', 'laughs', 'xxe', 'external-dtd', 'huge', 'huge-chunked', 'bomb', 'many'];
      await waitFor(async () => (await Promise.all(others.map((n) => checkedAt(n, at)))).every(Boolean), { timeoutMs: 8000, intervalMs: 50 });
      const othersDoneAfter = Date.now() - started;
      const trickleMeanwhile = await feedRow('trickle');
      expect(trickleMeanwhile.poll_lease_until, 'the trickling feed is still being read while the others are done').not.toBeNull();
      expect(othersDoneAfter).toBeLessThan(8000);

      expect((await feedRow('good')).last_error).toBeNull();
      expect((await feedRow('huge')).last_error).toBe('Feed is larger than 5 MB');
      expect((await feedRow('huge-chunked')).last_error).toBe('Feed is larger than 5 MB');
      expect((await feedRow('bomb')).last_error).toBe('Feed is larger than 5 MB');
      const many = await feedRow('many');
      expect(many.last_error).toBeNull();
      const manyItems = await h.t.ctx.db.selectFrom('rss_feed_items').select((eb) => eb.fn.countAll<number>().as('n')).where('feed_id', '=', ids.many!).executeTakeFirstOrThrow();
      expect(Number(manyItems.n), 'items recorded from a 100,000-item feed').toBe(500);

      const trickle = await waitFor(() => checkedAt('trickle', at), { timeoutMs: 15_000, intervalMs: 100 });
      expect(trickle.last_error).toBe('Feed took longer than 10 s');
      expect(Date.now() - started).toBeLessThan(14_000);
    } finally {
      clearInterval(sampler);
    }
    // A decoded bomb alone would be 1 GB; capped, everything together stays far below.
    expect((peakRss - baseRss) / MB, `peak RSS growth ${((peakRss - baseRss) / MB).toFixed(0)} MB`).toBeLessThan(256);
  });

  it('"Check now" answers the same clear error for a gzip bomb', async () => {
    const response = await h.t.request('POST', `/api/rss-feeds/${ids.bomb}/check`, { token: h.owner.token });
    expect(response.status).toBe(200);
    expect(response.body.data.check).toMatchObject({ outcome: 'error', error: 'Feed is larger than 5 MB' });
    expect(response.body.data.feed.last_error).toBe('Feed is larger than 5 MB');
    // The feeds proven above are paused, so the next checks are quick.
    for (const name of ['huge', 'huge-chunked', 'bomb', 'many', 'trickle']) {
      expect((await h.t.request('PATCH', `/api/rss-feeds/${ids[name]}`, { token: h.owner.token, body: { is_active: false } })).status).toBe(200);
    }
  });

  it('expands no entity and fetches no external entity or DTD; a GUID already seen never sends again', async () => {
    phase = 2;
    clock.advance(16 * MINUTE);
    const at = clock.now();
    await h.engine.scheduler!.tick();
    for (const name of ['good', 'laughs', 'xxe', 'external-dtd']) await waitFor(() => checkedAt(name, at), { timeoutMs: 10_000 });

    const drafts = await h.t.ctx.db.selectFrom('notifications').selectAll().where('source', '=', 'rss').execute();
    for (const draft of drafts) {
      expect(draft.title.length).toBeLessThanOrEqual(50);
      expect(draft.message.length).toBeLessThanOrEqual(150);
      expect(`${draft.title} ${draft.message}`).not.toMatch(/lollollol|root:|canary/);
    }
    expect(drafts.map((d) => d.destination_url).sort()).toEqual(['https://feeds.example/g-2', 'https://feeds.example/l-1', 'https://feeds.example/x-1']);
    for (const name of ['good', 'laughs', 'xxe', 'external-dtd']) expect((await feedRow(name)).last_error, name).toBeNull();
    expect(entityTarget.requests, 'the parser asked for an external entity or DTD').toEqual([]);

    // Next poll: the same GUIDs, retitled or edited, create nothing.
    phase = 3;
    clock.advance(16 * MINUTE);
    const again = clock.now();
    await h.engine.scheduler!.tick();
    await waitFor(() => checkedAt('good', again), { timeoutMs: 10_000 });
    const after = await h.t.ctx.db.selectFrom('notifications').select('id').where('source', '=', 'rss').execute();
    expect(after).toHaveLength(drafts.length);
  });
});
