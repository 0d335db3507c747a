import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { countryCodesNamed } from '../src/features/subscribers/country-names';
import { ManualClock } from '../src/platform/clock';
import { indexesOf, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';
import { subscriberRow } from './support/subscriber-rows';

// A search of the subscribers list (docs/product.md, "Subscribers"; issue 15
// part 5): resolved into the browsers, OSes and countries it matches
// (subscribers/search.ts) and served by index subscribers_site_browser_os_country,
// it must find exactly what the substring match on every row found: browser,
// OS or country code containing the text (any case), or a country whose name
// does; every page in list order, with the exact total, alone and with the
// status filters.

const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', 'Samsung Internet', 'Opera Mini', 'Unknown'];
const OSES = ['Windows', 'macOS', 'iOS', 'Android', 'Linux', 'ChromeOS', 'Unknown'];
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'AE', 'JP', 'IO', 'Unknown'];

interface Row {
  id: string;
  browser: string | null;
  os: string | null;
  country: string | null;
  is_active: 0 | 1;
  subscribed_at: number;
}

/** The old rule, row by row: what every search must still find. */
function oldMatch(row: Row, text: string): boolean {
  const t = text.trim().toLowerCase();
  const has = (value: string | null) => value !== null && value.toLowerCase().includes(t);
  return has(row.browser) || has(row.os) || has(row.country) || (row.country !== null && countryCodesNamed(t).includes(row.country));
}

function newestFirst(a: Row, b: Row): number {
  return b.subscribed_at - a.subscribed_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

describe('subscribers list search', () => {
  let t: TestApp;
  let owner: TestUser;
  let siteId: string;
  let otherSite: string;
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));
  const rows: Row[] = [];

  async function insert(site: string, list: Row[]): Promise<void> {
    await t.ctx.db
      .insertInto('subscribers')
      .values(
        list.map((row) => subscriberRow(site, row)),
      )
      .execute();
  }

  async function everyPage(site: string, query: string, limit: number): Promise<{ ids: string[]; totals: Set<number> }> {
    const ids: string[] = [];
    const totals = new Set<number>();
    for (let page = 1; ; page++) {
      const response = await t.request('GET', `/api/sites/${site}/subscribers?${query}&page=${page}&limit=${limit}`, { token: owner.token });
      expect(response.status).toBe(200);
      totals.add(response.body.data.total);
      if (!response.body.data.subscribers.length) break;
      ids.push(...response.body.data.subscribers.map((s: { id: string }) => s.id));
    }
    return { ids, totals };
  }

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    siteId = (await t.createSite(owner.token)).id;
    otherSite = (await t.createSite(owner.token, { name: 'Other', url: 'https://other.example' })).id;
    const start = clock.now();
    for (let n = 0; n < 240; n++) {
      rows.push({
        id: crypto.randomUUID(),
        browser: BROWSERS[n % BROWSERS.length]!,
        os: OSES[(n * 3) % OSES.length]!,
        country: COUNTRIES[(n * 5) % COUNTRIES.length]!,
        is_active: n % 4 === 1 ? 0 : 1,
        // Some share an instant: the id decides among them.
        subscribed_at: start - Math.floor(n / 3) * 60_000,
      });
    }
    await insert(siteId, rows);
    // Another site's subscribers never show, whatever they match.
    await insert(otherSite, [{ id: crypto.randomUUID(), browser: 'Firefox', os: 'iOS', country: 'DE', is_active: 1, subscribed_at: start }]);
  });
  afterAll(async () => t.close());

  const texts = ['firefox', 'FIRE', 'e', 'o', 'in', 'de', 'germany', 'United', 'unknown', 'kno', 'ios', 'os', 'mac', 'internet', 'zz', '%', '_', 'i o', ' us '];

  it('finds exactly the rows the substring match found, in list order, with the exact total', async () => {
    for (const text of texts) {
      for (const [status, keep] of [
        ['', () => true],
        ['is_active=true&', (row: Row) => row.is_active === 1],
        ['is_active=false&', (row: Row) => row.is_active === 0],
      ] as const) {
        const want = rows
          .filter((row) => keep(row) && oldMatch(row, text))
          .sort(newestFirst)
          .map((row) => row.id);
        const { ids, totals } = await everyPage(siteId, `${status}search=${encodeURIComponent(text)}`, 50);
        expect(ids, `${status}search=${text}`).toEqual(want);
        expect([...totals], `${status}search=${text}`).toEqual([want.length]);
      }
    }
  });

  it('pages through a search without skipping or repeating anyone, from both ends', async () => {
    const want = rows
      .filter((row) => oldMatch(row, 'e'))
      .sort(newestFirst)
      .map((row) => row.id);
    expect(want.length).toBeGreaterThan(100);
    for (const limit of [1, 7, 13]) {
      const { ids, totals } = await everyPage(siteId, 'search=e', limit);
      expect(ids, `limit ${limit}`).toEqual(want);
      expect([...totals]).toEqual([want.length]);
    }
  });

  it('exports exactly the rows a search finds', async () => {
    const want = rows.filter((row) => oldMatch(row, 'germany')).map((row) => row.id);
    const response = await t.app.inject({ method: 'GET', url: `/api/sites/${siteId}/subscribers/export?search=germany`, headers: { authorization: `Bearer ${owner.token}` } });
    expect(response.statusCode).toBe(200);
    const exported = response.body.trim().split('\n').slice(1);
    expect(exported.length).toBe(want.length);
    for (const id of want) expect(response.body).toContain(id);
  });

  it('still finds the right rows on a site with a subscriber without browser or OS (the substring match on every row)', async () => {
    const site = (await t.createSite(owner.token, { name: 'Nulls', url: 'https://nulls.example' })).id;
    const at = clock.now();
    const list: Row[] = [
      { id: crypto.randomUUID(), browser: null, os: 'iOS', country: 'DE', is_active: 1, subscribed_at: at },
      { id: crypto.randomUUID(), browser: 'Chrome', os: null, country: 'FR', is_active: 1, subscribed_at: at - 1 },
      { id: crypto.randomUUID(), browser: 'Firefox', os: 'Linux', country: null, is_active: 1, subscribed_at: at - 2 },
    ];
    await insert(site, list);
    for (const text of ['ios', 'france', 'germany', 'chrome', 'li', 'zz']) {
      const want = list.filter((row) => oldMatch(row, text)).map((row) => row.id);
      const { ids, totals } = await everyPage(site, `search=${text}`, 50);
      expect(ids, text).toEqual(want);
      expect([...totals]).toEqual([want.length]);
    }
  });
});

describe('migration 0030 on a database of 0029 with subscribers', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  let old: OldDatabase;
  let db: Kysely<any>;

  const indexesOfSubscribers = () => indexesOf(old, 'subscribers');

  beforeAll(async () => {
    old = await openDatabaseAt('0029_subscriber_list_order');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    const id = 'aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaa01aa';
    await db
      .insertInto('subscribers')
      .values(subscriberRow(site, { id, subscribed_at: T0 }))
      .execute();
  });
  afterAll(async () => old?.close());

  it('adds the search index and the sample index, which holds a subscriber whose id is in the sample', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0030_subscriber_search_and_sample');
    const indexes = await indexesOfSubscribers();
    expect(indexes).toContain('subscribers_site_browser_os_country');
    expect(indexes).toContain('subscribers_site_sample');
    const sampled = await sql<{ n: number | string }>`SELECT count(*) AS n FROM subscribers WHERE site_id = ${site} AND is_active = 1 AND substr(id, length(id) - 3, 2) IN ('00', '01', '02')`.execute(db);
    expect(Number(sampled.rows[0]!.n)).toBe(1);
  });
});
