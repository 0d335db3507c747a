import { describe, expect, it } from 'vitest';
import { localDayOf } from '../../src/features/rss-feeds/feed-check';
import { withUtmParams } from '@herald/contracts';
import { feedItemNotification, newestFirst, planNewItems, type FeedNotificationContext } from '../../src/features/rss-feeds/feed-notification';
import type { FeedItem } from '../../src/features/rss-feeds/feed-parser';
import { truncateText } from '../../src/features/rss-feeds/feed-text';

const item = (overrides: Partial<FeedItem> = {}): FeedItem => ({
  id: 'post-1',
  guid: 'post-1',
  title: 'A short title',
  link: 'https://blog.example/posts/1?ref=feed',
  summary: 'What the post says.',
  imageUrl: 'https://blog.example/img/1.jpg',
  publishedAt: Date.UTC(2026, 2, 1),
  repeatsEarlierItem: false,
  ...overrides,
});

const context = (overrides: Partial<FeedNotificationContext> = {}): FeedNotificationContext => ({
  feedName: 'Acme Blog',
  utm: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'rss' },
  showActionButtons: false,
  iconUrl: 'https://blog.example/icon.png',
  homeUrl: 'https://blog.example/',
  ...overrides,
});

describe('feed item → notification (spec §9 title 50, message 150)', () => {
  it('keeps short texts, adds the UTM parameters and keeps the link’s own query', () => {
    const content = feedItemNotification(item(), context());
    expect(content).toEqual({
      title: 'A short title',
      message: 'What the post says.',
      destination_url: 'https://blog.example/posts/1?ref=feed&utm_source=herald&utm_medium=push&utm_campaign=rss',
      image_url: 'https://blog.example/img/1.jpg',
      icon_url: 'https://blog.example/icon.png',
      actions: [],
    });
  });

  it('shortens a long title at a word with "…" and the summary to 150 characters', () => {
    const title = 'Seventeen remarkable things we learned while rebuilding our checkout from scratch';
    const summary = 'word '.repeat(60).trim();
    const content = feedItemNotification(item({ title, summary }), context());
    expect(content.title).toBe('Seventeen remarkable things we learned while…');
    expect(content.title.length).toBeLessThanOrEqual(50);
    expect(content.message.length).toBeLessThanOrEqual(150);
    expect(content.message.endsWith('word…')).toBe(true);
  });

  it("titles an item without a title with the feed's name, and falls back when there is no summary either", () => {
    expect(feedItemNotification(item({ title: '', summary: 'Just shipped a tiny fix.' }), context())).toMatchObject({
      title: 'Acme Blog',
      message: 'Just shipped a tiny fix.',
    });
    expect(feedItemNotification(item({ title: '', summary: '' }), context())).toMatchObject({ title: 'Acme Blog', message: 'New post from Acme Blog' });
    const longTitle = 'A title that is much longer than fifty characters and has no summary at all';
    expect(feedItemNotification(item({ title: longTitle, summary: '' }), context()).message).toBe(longTitle);
  });

  it('links to the feed’s page when an item has no link, and offers at most two buttons', () => {
    const content = feedItemNotification(item({ link: null }), context({ showActionButtons: true }));
    expect(content.destination_url).toBe('https://blog.example/?utm_source=herald&utm_medium=push&utm_campaign=rss');
    expect(content.actions).toEqual([{ title: 'Read more', url: content.destination_url }]);

    const withLink = feedItemNotification(item(), context({ showActionButtons: true }));
    expect(withLink.actions.map((a) => a.title)).toEqual(['Read more', 'Visit site']);
    expect(withLink.actions[1]!.url).toBe('https://blog.example/?utm_source=herald&utm_medium=push&utm_campaign=rss');
  });

  it('replaces a UTM value the link already has and leaves others alone when a value is empty', () => {
    expect(withUtmParams('https://a.example/p?utm_source=twitter&x=1', { utm_source: 'herald', utm_medium: null, utm_campaign: null })).toBe(
      'https://a.example/p?utm_source=herald&x=1',
    );
  });

  it('drops buttons, then the image, when long links would not fit one push message', () => {
    const longLink = `https://blog.example/p?${'q='.padEnd(1500, 'x')}`;
    const content = feedItemNotification(item({ link: longLink, imageUrl: `https://img.example/${'i'.repeat(1800)}.jpg` }), context({ showActionButtons: true }));
    expect(content.actions).toEqual([]);
    expect(content.image_url).toBeNull();
    expect(Buffer.byteLength(JSON.stringify(content))).toBeLessThanOrEqual(3200);
  });

  it('never splits an emoji when shortening', () => {
    const cut = truncateText(`${'a'.repeat(48)}😀😀😀`, 50);
    expect(cut.length).toBeLessThanOrEqual(50);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(cut.endsWith('…')).toBe(true);
  });
});

describe('which new items are sent (daily maximum)', () => {
  const entries = [
    { item: { publishedAt: Date.UTC(2026, 0, 1) }, position: 0, name: 'old' },
    { item: { publishedAt: Date.UTC(2026, 0, 3) }, position: 1, name: 'newest' },
    { item: { publishedAt: Date.UTC(2026, 0, 2) }, position: 2, name: 'middle' },
  ];

  it('orders by date when every item has one, else keeps the feed’s order', () => {
    expect(newestFirst(entries).map((e) => e.name)).toEqual(['newest', 'middle', 'old']);
    const undated = entries.map((e, i) => ({ ...e, item: { publishedAt: i === 1 ? null : e.item.publishedAt } }));
    expect(newestFirst(undated).map((e) => e.name)).toEqual(['old', 'newest', 'middle']);
  });

  it('sends the newest up to what is left of today and skips the rest; drafts are bounded per check', () => {
    const ordered = newestFirst(entries);
    expect(planNewItems(ordered, { createDraft: false, sendsLeftToday: 2, draftsPerCheck: 50 }).map((p) => [p.entry.name, p.outcome])).toEqual([
      ['newest', 'sent'],
      ['middle', 'sent'],
      ['old', 'skipped'],
    ]);
    expect(planNewItems(ordered, { createDraft: false, sendsLeftToday: -1, draftsPerCheck: 50 }).every((p) => p.outcome === 'skipped')).toBe(true);
    expect(planNewItems(ordered, { createDraft: true, sendsLeftToday: 0, draftsPerCheck: 2 }).map((p) => p.outcome)).toEqual(['draft', 'draft', 'skipped']);
  });

  it("counts days in the site's timezone", () => {
    const at = Date.UTC(2026, 2, 11, 3, 0); // 23:00 on the 10th in New York
    expect(localDayOf(at, 'UTC')).toBe('2026-03-11');
    expect(localDayOf(at, 'America/New_York')).toBe('2026-03-10');
    expect(localDayOf(at, 'Asia/Tokyo')).toBe('2026-03-11');
  });
});
