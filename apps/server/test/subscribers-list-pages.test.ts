import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The subscribers list at any size (docs/product.md, "Subscribers"; issue 15
// part 5): every page of every filter holds exactly the rows of the whole
// list in order (newest first, then id), whether the page is read from the
// newest end or, past the middle, from the oldest end; the totals of the
// status filters come from the active counter plus the inactive count and
// must equal the rows.

const UA = {
  chrome: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  firefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
};

function subscription() {
  const ecdh = crypto.createECDH('prime256v1');
  return {
    endpoint: `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(16).toString('base64url')}`,
    keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') },
  };
}

interface Listed {
  id: string;
  browser: string;
  is_active: boolean;
  subscribed_at: string;
}

describe('subscribers list pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let siteId: string;
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));
  /** Every subscriber of the site, as the database holds them, newest first (subscribed_at, then id). */
  let expected: Array<{ id: string; browser: string | null; is_active: boolean }>;

  async function subscribe(userAgent: string): Promise<string> {
    const response = await t.app.inject({
      method: 'POST',
      url: `/api/public/sites/${siteId}/subscribers`,
      headers: { 'user-agent': userAgent },
      payload: { subscription: subscription(), language: 'en-US', timezone: 'UTC' },
    });
    expect(response.statusCode).toBe(201);
    return response.json().data.subscriber.id as string;
  }

  async function listPage(query: string, page: number, limit: number): Promise<{ subscribers: Listed[]; total: number }> {
    const response = await t.request('GET', `/api/sites/${siteId}/subscribers?${query}page=${page}&limit=${limit}`, { token: owner.token });
    expect(response.status).toBe(200);
    return response.body.data;
  }

  /** Pages 1… until past the end, joined. */
  async function everyPage(query: string, limit: number): Promise<{ ids: string[]; totals: number[] }> {
    const ids: string[] = [];
    const totals: number[] = [];
    for (let page = 1; ; page++) {
      const { subscribers, total } = await listPage(query, page, limit);
      totals.push(total);
      if (!subscribers.length) break;
      expect(subscribers.length).toBeLessThanOrEqual(limit);
      ids.push(...subscribers.map((s) => s.id));
    }
    return { ids, totals };
  }

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    siteId = (await t.createSite(owner.token)).id;
    // 41 subscribers, in groups of up to three at the same instant (the id decides among them).
    const ids: string[] = [];
    for (let i = 0; i < 41; i++) {
      if (i % 3 === 0) clock.advance(60_000);
      ids.push(await subscribe(i % 4 === 0 ? UA.firefox : UA.chrome));
    }
    // Every fifth leaves: the list keeps them as inactive.
    for (const id of ids.filter((_, i) => i % 5 === 2)) {
      expect((await t.request('DELETE', `/api/subscribers/${id}`, { token: owner.token })).status).toBe(200);
    }
    const rows = await t.ctx.db
      .selectFrom('subscribers')
      .select(['id', 'browser', 'is_active', 'subscribed_at'])
      .where('site_id', '=', siteId)
      .execute();
    expected = rows
      .sort((a, b) => b.subscribed_at - a.subscribed_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .map((row) => ({ id: row.id, browser: row.browser, is_active: row.is_active === 1 }));
    expect(expected.length).toBe(41);
  });
  afterAll(async () => t.close());

  const filters: Array<[string, string, (row: { browser: string | null; is_active: boolean }) => boolean]> = [
    ['All', '', () => true],
    ['Active', 'is_active=true&', (row) => row.is_active],
    ['Inactive', 'is_active=false&', (row) => !row.is_active],
    ['a search', 'search=firefox&', (row) => row.browser === 'Firefox'],
    ['Active and a search', 'is_active=true&search=chrome&', (row) => row.is_active && row.browser === 'Chrome'],
  ];

  for (const [name, query, keep] of filters) {
    it(`pages through ${name} without skipping or repeating anyone, from both ends, with the exact total`, async () => {
      const want = expected.filter(keep).map((row) => row.id);
      expect(want.length).toBeGreaterThan(3);
      for (const limit of [1, 4, 7, 50]) {
        const { ids, totals } = await everyPage(query, limit);
        expect(ids, `limit ${limit}`).toEqual(want);
        expect(new Set(totals)).toEqual(new Set([want.length]));
      }
    });
  }

  it('reads the last page (the far half, read from the oldest end) in list order', async () => {
    const { subscribers, total } = await listPage('', 9, 5);
    expect(total).toBe(41);
    expect(subscribers.map((s) => s.id)).toEqual(expected.slice(40).map((row) => row.id));
    const page8 = await listPage('', 8, 5);
    expect(page8.subscribers.map((s) => s.id)).toEqual(expected.slice(35, 40).map((row) => row.id));
    expect((await listPage('', 10, 5)).subscribers).toEqual([]);
  });

  it('counts the reach of everyone from the active counter, equal to the rows', async () => {
    const response = await t.request('GET', `/api/sites/${siteId}/audience`, { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body.data.count).toBe(expected.filter((row) => row.is_active).length);
  });
});
