import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';
import { subscriberRow } from './support/subscriber-rows';

// Next and Previous of the subscribers list by cursor (docs/product.md,
// "Subscribers"; issue 15 part 5): `after` the last row of a page reads the
// next page, `before` the first row the previous one, with every filter and
// a search; walking the list both ways holds every subscriber once, in list
// order (newest first, then id), exactly as the pages by offset do.

interface Row {
  id: string;
  browser: string;
  is_active: 0 | 1;
  subscribed_at: number;
}

describe('subscribers list by cursor', () => {
  let t: TestApp;
  let owner: TestUser;
  let siteId: string;
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));
  const rows: Row[] = [];

  async function list(query: string): Promise<{ subscribers: Array<{ id: string }>; total: number; cursors: { next: string | null; previous: string | null } }> {
    const response = await t.request('GET', `/api/sites/${siteId}/subscribers?${query}`, { token: owner.token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data;
  }

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    siteId = (await t.createSite(owner.token)).id;
    const start = clock.now();
    for (let n = 0; n < 41; n++) {
      // Up to three at the same instant: the id decides among them.
      rows.push({ id: crypto.randomUUID(), browser: n % 4 === 0 ? 'Firefox' : 'Chrome', is_active: n % 5 === 2 ? 0 : 1, subscribed_at: start - Math.floor(n / 3) * 60_000 });
    }
    await t.ctx.db
      .insertInto('subscribers')
      .values(
        rows.map((row) => subscriberRow(siteId, row)),
      )
      .execute();
    const active = rows.filter((row) => row.is_active === 1).length;
    await t.ctx.db.updateTable('sites').set({ active_subscriber_count: active }).where('id', '=', siteId).execute();
    rows.sort((a, b) => b.subscribed_at - a.subscribed_at || (a.id < b.id ? 1 : -1));
  });
  afterAll(async () => t.close());

  const filters: Array<[string, string, (row: Row) => boolean]> = [
    ['All', '', () => true],
    ['Active', 'is_active=true&', (row) => row.is_active === 1],
    ['Inactive', 'is_active=false&', (row) => row.is_active === 0],
    ['a search', 'search=firefox&', (row) => row.browser === 'Firefox'],
  ];

  for (const [name, filter, keep] of filters) {
    it(`walks ${name} forward with Next and back with Previous, every subscriber once, in order`, async () => {
      const want = rows.filter(keep).map((row) => row.id);
      for (const limit of [1, 4, 7, 50]) {
        const pages: string[][] = [];
        let previousCursor: string | null = null;
        let page = await list(`${filter}page=1&limit=${limit}`);
        while (page.subscribers.length) {
          expect(page.total).toBe(want.length);
          pages.push(page.subscribers.map((s) => s.id));
          previousCursor = page.cursors.previous;
          page = await list(`${filter}page=${pages.length + 1}&limit=${limit}&after=${page.cursors.next}`);
        }
        expect(pages.flat(), `${name}, limit ${limit}`).toEqual(want);
        // By offset, the same pages.
        for (const [i, ids] of pages.entries()) expect((await list(`${filter}page=${i + 1}&limit=${limit}`)).subscribers.map((s) => s.id)).toEqual(ids);
        // Back from the last page with Previous: the pages before it, in reverse.
        for (let i = pages.length - 2; i >= 0; i--) {
          const back = await list(`${filter}page=${i + 1}&limit=${limit}&before=${previousCursor}`);
          expect(back.subscribers.map((s) => s.id), `${name}, limit ${limit}, page ${i + 1} backwards`).toEqual(pages[i]);
          previousCursor = back.cursors.previous;
        }
      }
    });
  }

  it('answers an empty page past the end with no cursors, and refuses a bad cursor with the reason', async () => {
    const last = await list(`page=1&limit=50`);
    const past = await list(`page=2&limit=50&after=${last.cursors.next}`);
    expect(past).toMatchObject({ subscribers: [], total: 41, cursors: { next: null, previous: null } });
    for (const [query, message] of [
      ['after=nonsense', 'after must be a cursor from a list answer'],
      ['before=1.a%20b', 'before must be a cursor from a list answer'],
      [`after=${last.cursors.next}&before=${last.cursors.previous}`, 'Give after or before, not both'],
    ]) {
      const response = await t.request('GET', `/api/sites/${siteId}/subscribers?${query}`, { token: owner.token });
      expect(response.status, query).toBe(400);
      expect(response.body.error.message, query).toContain(message);
    }
  });
});
