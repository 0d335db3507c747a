import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The notifications list in pages (docs/product.md, "Notifications list";
// issue 15 part 5): `page` and `limit` (default and at most 500) read the
// list newest first without skipping or repeating one, with each status
// filter; the counts stay those of the whole site.

describe('notifications list pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let siteId: string;
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));
  /** Ids newest first. */
  const created: Array<{ id: string; status: string }> = [];

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    siteId = (await t.createSite(owner.token)).id;
    for (let i = 0; i < 11; i++) {
      // Some share an instant: the id decides among them.
      if (i % 2 === 0) clock.advance(60_000);
      const body = { type: 'ONE_TIME', title: `N${i}`, message: 'M', destination_url: 'https://shop.example/', ...(i % 3 === 0 ? { scheduled_at: new Date(clock.now() + 86_400_000).toISOString() } : {}) };
      const response = await t.request('POST', `/api/sites/${siteId}/notifications`, { token: owner.token, body });
      expect(response.status).toBe(201);
      created.push({ id: response.body.data.notification.id, status: response.body.data.notification.status });
    }
    const rows = await t.ctx.db.selectFrom('notifications').select(['id', 'created_at']).where('site_id', '=', siteId).execute();
    const order = rows.sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((row) => row.id);
    created.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  });
  afterAll(async () => t.close());

  async function list(query: string) {
    const response = await t.request('GET', `/api/sites/${siteId}/notifications?${query}`, { token: owner.token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data as { notifications: Array<{ id: string }>; counts: Record<string, number> };
  }

  for (const [name, status] of [
    ['All', ''],
    ['Draft', 'draft'],
    ['Scheduled', 'scheduled'],
  ] as const) {
    it(`pages through ${name} newest first without skipping or repeating one`, async () => {
      const want = created.filter((row) => !status || row.status === status).map((row) => row.id);
      expect(want.length).toBeGreaterThan(2);
      for (const limit of [1, 2, 3, 50]) {
        const ids: string[] = [];
        for (let page = 1; ; page++) {
          const data = await list(`${status ? `status=${status}&` : ''}page=${page}&limit=${limit}`);
          expect(data.counts.all).toBe(11);
          if (!data.notifications.length) break;
          expect(data.notifications.length).toBeLessThanOrEqual(limit);
          ids.push(...data.notifications.map((n) => n.id));
        }
        expect(ids, `limit ${limit}`).toEqual(want);
      }
      // Without page and limit: the first 500, as before paging.
      expect((await list(status ? `status=${status}` : '')).notifications.map((n) => n.id)).toEqual(want);
    });
  }

  it('refuses a page or limit out of range with the reason', async () => {
    for (const [query, message] of [
      ['limit=0', 'limit must be 1 or more'],
      ['limit=501', 'limit must be at most 500'],
      ['page=0', 'page must be 1 or more'],
      ['page=x', 'page must be a number'],
    ]) {
      const response = await t.request('GET', `/api/sites/${siteId}/notifications?${query}`, { token: owner.token });
      expect(response.status, query).toBe(400);
      expect(response.body.error.message, query).toContain(message);
    }
  });
});
