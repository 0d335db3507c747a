import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FeedParseError, parseFeed, type ParsedFeed } from '../../src/features/rss-feeds/feed-parser';

// The 43 real-world feeds in test/fixtures/feeds (see LICENSES.md there),
// checked against MANIFEST.tsv. They are read from disk only: the links inside
// are historical and never fetched.
const fixturesDir = path.join(import.meta.dirname, '..', 'fixtures', 'feeds');

interface ManifestRow {
  file: string;
  dialect: string;
  encodingDeclared: string;
  itemCount: number;
  firstItemTitle: string;
  firstItemLink: string;
  notes: string;
}

const manifest: ManifestRow[] = fs
  .readFileSync(path.join(fixturesDir, 'MANIFEST.tsv'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const cells = line.split('\t');
    return {
      file: cells[0]!,
      dialect: cells[1]!,
      encodingDeclared: cells[2]!,
      itemCount: Number(cells[3]),
      firstItemTitle: cells[4] === '-' ? '' : cells[4]!,
      firstItemLink: cells[5]!,
      notes: cells[10] ?? '',
    };
  });

/** Where each feed lived, for the ones whose links are relative (never fetched). */
const FEED_URLS: Record<string, string> = {
  'rss2-relative-links-2digit-year-neverwinter.xml': 'https://www.arcgames.com/en/games/neverwinter/news/rss',
  'atom10-relative-links-tpm.xml': 'http://talkingpointsmemo.com/account/feed/all/LpNewCzTqYYiHqtKqyTw5DaF1aUucgyyXb2dsqKU2yMr',
  'atom10-relative-links-xhtml-intertwingly.xml': 'http://intertwingly.net/blog/index.atom',
  'atom10-relative-links-media-thumbnail-github-releases.xml': 'https://github.com/gulpjs/gulp/releases.atom',
};
const feedUrl = (file: string) => FEED_URLS[file] ?? `https://feeds.example/${file}`;

/**
 * The manifest shows craigslist's CDATA title with its tags removed but its
 * character reference `&#x0024;` left as written; read as the HTML it is (it
 * contains `<sup>`), the reference is a dollar sign.
 */
const TITLE_AS_PLAIN_TEXT: Record<string, string> = {
  'rss1-no-guid-craigslist.xml': 'Bright, Spacious Beautiful Victorian (oakland north / temescal) $4300 3bd 1930ft2',
};

const DIALECT_FORMAT: Record<string, ParsedFeed['format']> = { rss2: 'rss', rss09x: 'rss', rss1: 'rdf', atom10: 'atom' };

function parseFixture(file: string, options: { maxItems?: number; url?: string } = {}): ParsedFeed {
  return parseFeed(fs.readFileSync(path.join(fixturesDir, file)), { url: options.url ?? feedUrl(file), maxItems: options.maxItems });
}

describe('feed fixtures', () => {
  it('has all 43 fixtures listed in the manifest', () => {
    const files = fs.readdirSync(fixturesDir).filter((f) => f.endsWith('.xml'));
    expect(files).toHaveLength(43);
    expect(manifest.map((r) => r.file).sort()).toEqual(files.sort());
  });

  it.each(manifest.map((row) => [row.file, row] as const))('%s parses to the manifest', (file, row) => {
    const feed = parseFixture(file);
    expect(feed.format).toBe(DIALECT_FORMAT[row.dialect]);
    expect(feed.title).not.toBe('');
    expect(feed.items).toHaveLength(row.itemCount);

    const first = feed.items[0]!;
    expect(first.title).toBe(TITLE_AS_PLAIN_TEXT[file] ?? row.firstItemTitle);
    const expectedLink = row.firstItemLink === '-' ? null : new URL(row.firstItemLink, feedUrl(file)).href;
    expect(first.link).toBe(expectedLink);

    for (const item of feed.items) {
      if (item.link !== null) expect(item.link).toMatch(/^https?:\/\/[^/]/);
      if (item.imageUrl !== null) expect(item.imageUrl).toMatch(/^https?:\/\/[^/]/);
      // Plain text: no tags, no undecoded entities, no runs of whitespace, no replacement characters.
      for (const text of [item.title, item.summary]) {
        expect(text).not.toMatch(/<\/?(?:p|div|a|img|br|span|b|i|em|strong|sup)\b[^>]*>/i);
        expect(text).not.toMatch(/&(?:amp|lt|gt|quot|apos|nbsp|#\d+|#x[0-9a-f]+);/i);
        expect(text).not.toMatch(/\s{2,}|^\s|\s$|\uFFFD/);
      }
      expect(item.summary.length).toBeLessThanOrEqual(1000);
    }
  });

  it.each(manifest.map((row) => [row.file] as const))('%s gives every item an identity that is unique and stable across parses', (file) => {
    const first = parseFixture(file).items.map((i) => i.id);
    const second = parseFixture(file).items.map((i) => i.id);
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
    for (const id of first) expect(id.length).toBeGreaterThan(0);
  });

  it('keeps the ids of items without a guid when the feed moves to another address', () => {
    for (const file of ['rss2-bom-no-guid-donthitsave.xml', 'rss2-no-guid-aktuality-sk.xml', 'rss2-relative-links-2digit-year-neverwinter.xml']) {
      const here = parseFixture(file).items.map((i) => i.id);
      const moved = parseFixture(file, { url: 'https://mirror.example/other/path.xml' }).items.map((i) => i.id);
      expect(moved).toEqual(here);
    }
    const noGuid = parseFixture('rss2-bom-no-guid-donthitsave.xml').items;
    for (const item of noGuid) expect(item.id).toMatch(/^sha256:[0-9a-f]{40}$/);
  });

  it('uses guid, atom:id and rdf:about as they are', () => {
    expect(parseFixture('rss2-media-content-guardian.xml').items[0]!.id).toBe(
      'https://www.theguardian.com/us-news/2018/jan/31/donald-trump-state-of-the-union-address-unity-discord',
    );
    expect(parseFixture('atom10-relative-links-tpm.xml').items[0]!.id).toBe('tag:talkingpointsmemo.com,2005:ArticleDecorator/270060');
    expect(parseFixture('rss1-no-guid-craigslist.xml').items[0]!.id).toBe('http://sfbay.craigslist.org/eby/apa/6186664607.html');
  });

  it('keeps two different posts that share one guid apart (scripting.com)', () => {
    const items = parseFixture('rss2-no-titles-scriptingnews.xml').items;
    const sharing = items.filter((i) => i.link === 'http://scripting.com/2017/06/24.html#a100632');
    expect(sharing).toHaveLength(2);
    expect(sharing[0]!.id).toBe('http://scripting.com/2017/06/24.html#a100632');
    expect(sharing[1]!.id).toMatch(/^sha256:/);
    expect(sharing[0]!.summary).not.toBe(sharing[1]!.summary);
  });

  it('keeps items without a title with an empty title and a summary to write from', () => {
    const scripting = parseFixture('rss2-no-titles-scriptingnews.xml').items;
    expect(scripting.filter((i) => i.title === '')).toHaveLength(39);
    const manton = parseFixture('rss2-some-no-titles-microblog-manton.xml').items;
    expect(manton.filter((i) => i.title === '')).toHaveLength(4);
    for (const item of [...scripting, ...manton].filter((i) => i.title === '')) expect(item.summary).not.toBe('');
    const dead = parseFixture('rss09x-092-podcast-enclosures-bom-no-titles-winer-grateful-dead.xml').items;
    expect(dead.every((i) => i.title === '' && i.link === null && i.summary !== '')).toBe(true);
  });
});

describe('feed fixtures: images', () => {
  // Items that carry media:content / media:thumbnail / media:group / image enclosures, counted in the files.
  it.each([
    ['rss2-media-content-guardian.xml', 55, 'https://i.guim.co.uk/img/media/b73c8752cd4667c923dff7f1542f1fb20089e421/0_108_3000_1799/master/3000.jpg?w=460&q=55&auto=format&usm=12&fit=max&s=a606a273a90104e57b1e09bc4c0a1e11'],
    ['rss2-media-content-nytimes.xml', 27, 'https://static01.nyt.com/images/2017/01/07/us/07trump3_hp/07trump3_hp-moth.jpg'],
    ['rss2-long-200-items-media-indianexpress.xml', 200, null],
    ['rss2-bom-no-prolog-media-enclosures-mirror.xml', 25, 'http://i1.mirror.co.uk/incoming/article9578840.ece/ALTERNATES/s615/HORRIFIC-FOOTAGE.jpg'],
    ['rss2-media-thumbnail-reddit.xml', 16, null],
    ['atom10-media-group-youtube.xml', 15, 'https://i2.ytimg.com/vi/AFA8ZtMwrvc/hqdefault.jpg'],
    ['atom10-relative-links-media-thumbnail-github-releases.xml', 10, 'https://avatars3.githubusercontent.com/u/425716?v=3&s=60'],
    ['rss2-windows1251-enclosures-no-guid-oren-ru.xml', 10, 'http://www.oren.ru/upload/iblock/be8/stroitelstvo_krany.jpg'],
  ])('%s: %i items with an image', (file, withImage, firstImage) => {
    const items = parseFixture(file).items;
    expect(items.filter((i) => i.imageUrl !== null)).toHaveLength(withImage);
    if (firstImage) expect(items[0]!.imageUrl).toBe(firstImage);
  });

  it('prefers the widest media:content of an item (The Guardian lists 140 and 460 px)', () => {
    for (const item of parseFixture('rss2-media-content-guardian.xml').items) expect(item.imageUrl).toContain('w=460');
  });

  it('does not take audio or video enclosures for images', () => {
    const atp = parseFixture('rss2-podcast-enclosures-100-items-atp.xml').items;
    for (const item of atp) expect(item.imageUrl ?? '').not.toMatch(/\.(mp3|m4a|mp4)(\?|$)/);
    const fourFsod = parseFixture('atom10-podcast-enclosure-links-4fsod.xml').items;
    for (const item of fourFsod) expect(item.imageUrl ?? '').not.toMatch(/\.(mp3|m4v|mov|mp4)(\?|$)/);
  });

  it('falls back to the first <img> of the content, skipping tracking pixels', () => {
    const verge = parseFixture('atom10-html-content-theverge.xml').items;
    expect(verge.every((i) => i.imageUrl !== null)).toBe(true);
    const feedburner = parseFixture('atom10-blogger-feedburner-googleads-dev.xml').items;
    for (const item of feedburner) expect(item.imageUrl ?? '').not.toContain('feeds.feedburner.com/~r/');
  });
});

describe('feed fixtures: encodings', () => {
  it.each([
    ['rss2-windows1251-enclosures-no-guid-oren-ru.xml', 'Новости Оренбурга и области / Раздел Новости'],
    ['rss2-gb2312-odd-dates-no-guid-kc0011.xml', '投资资讯网交易在线--流通纪念币最新20篇论坛主题-全文'],
    ['rss2-iso88591-cdata-no-guid-jn-pt.xml', 'Jornal de Notícias - Últimas Notícias'],
    ['rss09x-091-iso88591-cdata-stadtfeuerwehr-weiz.xml', 'Stadtfeuerwehr Weiz - Einsätze'],
    ['rss1-iso88591-declared-but-utf8-laut-de.xml', 'laut.de - news'],
    ['rss1-bom-orf-at.xml', 'news.ORF.at'],
  ])('%s: channel title %s', (file, title) => {
    expect(parseFixture(file).title).toBe(title);
  });

  it('reads the mislabelled laut.de feed (declares ISO-8859-1, is UTF-8) without mojibake', () => {
    const items = parseFixture('rss1-iso88591-declared-but-utf8-laut-de.xml').items;
    const text = items.map((i) => `${i.title} ${i.summary}`).join(' ');
    expect(text).toContain('Schon länger haderten die Kölner');
    expect(text).not.toMatch(/Ã[¤¶¼Ÿ]/);
  });

  it('reads undeclared Latin-1 bytes (UOL) as windows-1252', () => {
    const items = parseFixture('rss2-undeclared-latin1-portuguese-dates-uol.xml').items;
    expect(items[0]!.title).toBe('Ibope: Bolsonaro perde de Haddad, Ciro e Alckmin em simulações de 2º turno');
    expect(items.map((i) => i.title).join(' ')).not.toContain('\uFFFD');
  });

  it('decodes Cyrillic, Chinese, Swedish, Slovak and Portuguese item titles', () => {
    expect(parseFixture('rss2-windows1251-enclosures-no-guid-oren-ru.xml').items[1]!.title).toBe('ЧОПовцы в Оренбурге избили молодого человека');
    expect(parseFixture('rss2-gb2312-odd-dates-no-guid-kc0011.xml').items[1]!.title).toBe('出南京泰山5盒，原盒看图');
    expect(parseFixture('rss2-iso88591-intranet30-se.xml').items[0]!.title).toBe('SVART MÅNAD - DÖDSOLYCKA i Vetlanda');
    expect(parseFixture('rss2-no-guid-aktuality-sk.xml').items[0]!.title).toBe('Analytici Goldman Sachs zvýšili odhad rastu ekonomiky USA');
    expect(parseFixture('rss2-iso88591-cdata-no-guid-jn-pt.xml').items[0]!.title).toBe('Mãe de utente é a nova presidente da Raríssimas');
  });
});

describe('feed fixtures: dates', () => {
  const iso = (file: string, index = 0) => {
    const at = parseFixture(file).items[index]!.publishedAt;
    return at === null ? null : new Date(at).toISOString();
  };

  it('reads every date the fixtures carry', () => {
    for (const row of manifest) {
      const items = parseFixture(row.file).items;
      const expected = row.file.includes('grateful-dead') ? 0 : items.length; // RSS 0.92 items there have no date
      expect(items.filter((i) => i.publishedAt !== null), row.file).toHaveLength(expected);
    }
  });

  it.each([
    ['rss2-podcast-enclosures-odd-dates-leading-newline-taverncast.xml', '2015-11-07T17:00:00.000Z'], // 07 Nov 2015 12:00:00 EST, no weekday
    ['rss2-relative-links-2digit-year-neverwinter.xml', '2017-12-07T18:00:29.000Z'], // Thu, 07 Dec 17 10:00:29 -0800
    ['rss2-undeclared-latin1-portuguese-dates-uol.xml', '2018-09-24T22:42:40.000Z'], // Seg, 24 Set 2018 19:42:40 -0300
    ['rss2-gb2312-odd-dates-no-guid-kc0011.xml', '2020-01-10T14:33:00.000Z'], // 2020/1/10 14:33:00 (no zone: UTC)
    ['rss1-date-only-no-prolog-biorxiv.xml', '2019-08-27T00:00:00.000Z'], // dc:date 2019-08-27
    ['rss2-est-dates-cdata-wapo-wellness.xml', '2012-08-21T15:33:00.000Z'], // Tue, 21 Aug 2012 10:33:00 EST
    ['atom10-cdata-heise-de.xml', '2016-02-01T16:22:00.000Z'], // 2016-02-01T17:22:00+01:00
  ])('%s: first item published %s', (file, expected) => {
    expect(iso(file)).toBe(expected);
  });
});

describe('feed fixtures: caps', () => {
  it('stops at the item cap', () => {
    expect(parseFixture('rss2-long-200-items-media-indianexpress.xml', { maxItems: 25 }).items).toHaveLength(25);
    const capped = parseFixture('rss2-podcast-enclosures-100-items-atp.xml', { maxItems: 1 });
    expect(capped.items).toHaveLength(1);
    expect(capped.items[0]!.title).toBe('311: Mutually Assured Destruction');
    expect(capped.title).toBe('Accidental Tech Podcast');
  });

  it('refuses a fixture larger than the byte cap with a clear message', () => {
    const body = fs.readFileSync(path.join(fixturesDir, 'rss2-bom-large-750kb-hubspot.xml'));
    expect(() => parseFeed(body, { url: 'https://feeds.example/', maxBytes: 512 * 1024 })).toThrow(new FeedParseError('too_large', 'Feed is larger than 512 KB'));
  });
});
