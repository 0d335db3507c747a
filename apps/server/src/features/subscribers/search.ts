// A search of the subscribers list at any size (docs/product.md,
// "Subscribers"; issue 15 part 5, measured by `npm run bench:lists`).
//
// The search matches browser, OS or country code as a case-insensitive
// substring, or a country whose English name contains it. The three columns
// hold few distinct values, so the text is first resolved into the values it
// matches, and the search becomes equality lists that index
// subscribers_site_browser_os_country (migration 0030) serves: no row is
// read to count the matches.
//
// The matching rows are split into three disjoint parts, so their counts add
// up and each is a set of index ranges:
//   1. browser matches;
//   2. browser does not, OS does;
//   3. neither does, country does.
// The site's (browser, OS) pairs are read from the index by skipping from
// one pair to the next (a few dozen lookups in one statement). Countries are stored as an ISO 3166-1 alpha-2 code or
// "Unknown" (the subscribe API and the import write nothing else), so the
// countries a text matches are found without the database. A site with a
// subscriber without browser or OS (none is written so today) falls back to
// the substring match on every row.
import { UNKNOWN } from '@herald/contracts';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema';
import type { SearchPart, SubscriberFilters } from './repository';

type Db = Kysely<Database> | Transaction<Database>;

let twoLetterCodes: string[] | undefined;

/** AA…ZZ: every value an ISO 3166-1 alpha-2 column can hold. */
function allTwoLetterCodes(): string[] {
  if (twoLetterCodes) return twoLetterCodes;
  const codes: string[] = [];
  for (let a = 65; a <= 90; a += 1) for (let b = 65; b <= 90; b += 1) codes.push(String.fromCharCode(a, b));
  twoLetterCodes = codes;
  return codes;
}

/** The stored country values a search text matches: as a substring of the code (or "Unknown"), or by the country's name. */
export function countriesMatching(text: string, codesNamed: string[]): string[] {
  const found = new Set(allTwoLetterCodes().filter((code) => code.toLowerCase().includes(text)));
  for (const code of codesNamed) found.add(code);
  if (UNKNOWN.toLowerCase().includes(text)) found.add(UNKNOWN);
  return [...found].sort();
}

/**
 * The site's distinct (browser, OS) pairs without a NULL, ascending: one
 * statement that steps from each pair to the next, each step a few index
 * seeks for the smallest value above the last (`min()` over an equality and
 * a range, which both engines answer from the index's first entry), however
 * many subscribers each pair has.
 */
async function browserOsPairs(db: Db, siteId: string): Promise<Array<{ browser: string; os: string }>> {
  const nextOs = sql`(SELECT min(s.os) FROM subscribers s WHERE s.site_id = ${siteId} AND s.browser = p.browser AND s.os > p.os)`;
  const nextBrowser = sql`(SELECT min(s.browser) FROM subscribers s WHERE s.site_id = ${siteId} AND s.browser > p.browser)`;
  const result = await sql<{ browser: string | null; os: string | null }>`
    WITH RECURSIVE p(browser, os) AS (
      SELECT b.browser, (SELECT min(s.os) FROM subscribers s WHERE s.site_id = ${siteId} AND s.browser = b.browser)
      FROM (SELECT min(browser) AS browser FROM subscribers WHERE site_id = ${siteId}) AS b
      UNION ALL
      SELECT
        CASE WHEN ${nextOs} IS NOT NULL THEN p.browser ELSE ${nextBrowser} END,
        COALESCE(${nextOs}, (SELECT min(s.os) FROM subscribers s WHERE s.site_id = ${siteId} AND s.browser = ${nextBrowser}))
      FROM p WHERE p.browser IS NOT NULL
    )
    SELECT browser, os FROM p WHERE browser IS NOT NULL AND os IS NOT NULL`.execute(db);
  return result.rows.map((row) => ({ browser: row.browser!, os: row.os! }));
}

/**
 * True when a subscriber of the site has no browser, or no OS under one of
 * `browsers`: one statement of an index seek per browser (SQLite reads every
 * row for `browser IN (…) AND os IS NULL`, or for an OR of the two).
 */
async function anyWithoutBrowserOrOs(db: Db, siteId: string, browsers: string[]): Promise<boolean> {
  const bySite = () => db.selectFrom('subscribers').select('subscribers.id').where('subscribers.site_id', '=', siteId);
  const row = await db
    .selectNoFrom((eb) =>
      eb
        .or([eb.exists(bySite().where('subscribers.browser', 'is', null)), ...browsers.map((browser) => eb.exists(bySite().where('subscribers.browser', '=', browser).where('subscribers.os', 'is', null)))])
        .as('found'),
    )
    .executeTakeFirstOrThrow();
  return Boolean(Number(row.found));
}

/**
 * The list's filters with the search resolved into equality parts
 * (`searchParts`; none when nothing can match). Unchanged without a search,
 * or when the site has rows the parts could not describe.
 */
export async function resolveSearch(db: Db, siteId: string, filters: SubscriberFilters): Promise<SubscriberFilters> {
  const text = filters.search;
  if (!text) return filters;
  const matches = (value: string) => value.toLowerCase().includes(text);
  const pairs = await browserOsPairs(db, siteId);
  const browsers = [...new Set(pairs.map((pair) => pair.browser))];
  if (await anyWithoutBrowserOrOs(db, siteId, browsers)) return filters;
  const browsersMatching = browsers.filter(matches);
  const otherBrowsers = browsers.filter((browser) => !matches(browser));
  // The OSes under the browsers that do not match: only those rows are left for parts 2 and 3.
  const oses = [...new Set(pairs.filter((pair) => !matches(pair.browser)).map((pair) => pair.os))].sort();
  const osesMatching = oses.filter(matches);
  const otherOses = oses.filter((os) => !matches(os));
  const countries = countriesMatching(text, filters.searchCountryCodes ?? []);

  const parts: SearchPart[] = [];
  if (browsersMatching.length) parts.push({ browser: browsersMatching });
  if (otherBrowsers.length && osesMatching.length) parts.push({ browser: otherBrowsers, os: osesMatching });
  if (otherBrowsers.length && otherOses.length && countries.length) parts.push({ browser: otherBrowsers, os: otherOses, country: countries });
  return { ...filters, searchParts: parts };
}
