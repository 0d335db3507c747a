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
// The site's browsers, and the OSes under each browser that does not match,
// are read from the index by skipping from one value to the next (a few
// lookups each). Countries are stored as an ISO 3166-1 alpha-2 code or
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
 * The distinct non-null values of `column` among the site's subscribers (and
 * with `browser` = the given one, for `os`), ascending: one index lookup per
 * value, each for the smallest value above the last.
 */
async function distinctValues(db: Db, siteId: string, column: 'browser' | 'os', browser?: string): Promise<string[]> {
  const col = sql.ref(column);
  const within = browser === undefined ? sql`site_id = ${siteId}` : sql`site_id = ${siteId} AND browser = ${browser}`;
  const result = await sql<{ value: string | null }>`
    WITH RECURSIVE v(value) AS (
      SELECT (SELECT min(${col}) FROM subscribers WHERE ${within})
      UNION ALL
      SELECT (SELECT min(${col}) FROM subscribers WHERE ${within} AND ${col} > v.value) FROM v WHERE v.value IS NOT NULL
    )
    SELECT value FROM v WHERE value IS NOT NULL`.execute(db);
  return result.rows.map((row) => row.value!);
}

async function anyNull(db: Db, siteId: string, column: 'browser' | 'os', browser?: string): Promise<boolean> {
  let query = db.selectFrom('subscribers').select('id').where('site_id', '=', siteId);
  if (browser !== undefined) query = query.where('browser', '=', browser);
  return (await query.where(column, 'is', null).limit(1).executeTakeFirst()) !== undefined;
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
  if (await anyNull(db, siteId, 'browser')) return filters;
  const browsers = await distinctValues(db, siteId, 'browser');
  const browsersMatching = browsers.filter(matches);
  const otherBrowsers = browsers.filter((browser) => !matches(browser));
  const oses = new Set<string>();
  for (const browser of otherBrowsers) {
    if (await anyNull(db, siteId, 'os', browser)) return filters;
    for (const os of await distinctValues(db, siteId, 'os', browser)) oses.add(os);
  }
  const osesMatching = [...oses].filter(matches).sort();
  const otherOses = [...oses].filter((os) => !matches(os)).sort();
  const countries = countriesMatching(text, filters.searchCountryCodes ?? []);

  const parts: SearchPart[] = [];
  if (browsersMatching.length) parts.push({ browser: browsersMatching });
  if (otherBrowsers.length && osesMatching.length) parts.push({ browser: otherBrowsers, os: osesMatching });
  if (otherBrowsers.length && otherOses.length && countries.length) parts.push({ browser: otherBrowsers, os: otherOses, country: countries });
  return { ...filters, searchParts: parts };
}
