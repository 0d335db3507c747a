import http from 'node:http';
import type { AddressInfo } from 'node:net';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedParseError, parseFeed } from '../../src/features/rss-feeds/feed-parser';

const url = 'https://blog.example/feed.xml';
const parse = (xml: string | Buffer, options: { maxItems?: number; maxBytes?: number; url?: string; contentType?: string } = {}) =>
  parseFeed(typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml, { url, ...options });

function refusal(fn: () => unknown): FeedParseError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FeedParseError);
    return error as FeedParseError;
  }
  throw new Error('expected a FeedParseError');
}

function rssItems(count: number, extra = ''): string {
  let items = '';
  for (let i = 1; i <= count; i += 1) items += `<item><title>Post ${i}</title><link>/posts/${i}</link><guid>post-${i}</guid>${extra}</item>`;
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title><link>https://blog.example/</link>${items}</channel></rss>`;
}

describe('parseFeed: hostile documents', () => {
  const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE rss [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<rss version="2.0"><channel><title>&lol9;</title>
<item><title>Laughs &lol9;</title><description>&lol9;&lol9;&lol9;</description><guid>a</guid></item>
</channel></rss>`;

  it('does not expand entities from a DTD (billion laughs) and finishes fast', () => {
    const started = performance.now();
    const feed = parse(billionLaughs);
    expect(performance.now() - started).toBeLessThan(500);
    expect(feed.items).toHaveLength(1);
    expect(feed.items[0]!.title).toBe('Laughs &lol9;');
    expect(feed.title).toBe('&lol9;');
    expect(JSON.stringify(feed)).not.toContain('lollol');
  });

  describe('external entities', () => {
    let server: http.Server;
    let port = 0;
    const requests: string[] = [];
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        requests.push(req.url ?? '');
        res.end('<!ENTITY leak "LEAKED">');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('never reads files or fetches URLs named by SYSTEM or PUBLIC identifiers', () => {
      const xxe = `<?xml version="1.0"?>
<!DOCTYPE rss SYSTEM "http://127.0.0.1:${port}/outer.dtd" [
  <!ENTITY passwd SYSTEM "file:///etc/passwd">
  <!ENTITY remote SYSTEM "http://127.0.0.1:${port}/entity">
  <!ENTITY % param SYSTEM "http://127.0.0.1:${port}/param.dtd">
  %param;
]>
<rss version="2.0"><channel><title>XXE</title>
<item><title>&passwd;</title><description>&remote; &leak;</description><guid>x</guid></item>
</channel></rss>`;
      const feed = parse(xxe);
      expect(feed.items).toHaveLength(1);
      expect(feed.items[0]!.title).toBe('&passwd;');
      expect(feed.items[0]!.summary).toBe('&remote; &leak;');
      expect(JSON.stringify(feed)).not.toMatch(/root:|LEAKED/);
      expect(requests).toEqual([]);
    });
  });

  it('refuses a 20 MB feed by the byte cap before reading it', () => {
    const huge = Buffer.from(rssItems(1, `<description>${'x'.repeat(20 * 1024 * 1024)}</description>`));
    const started = performance.now();
    const error = refusal(() => parse(huge));
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('Feed is larger than 5 MB');
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('accepts a feed of exactly the byte cap and refuses one byte more', () => {
    const body = Buffer.from(rssItems(3));
    expect(parse(body, { maxBytes: body.length }).items).toHaveLength(3);
    expect(refusal(() => parse(body, { maxBytes: body.length - 1 })).code).toBe('too_large');
  });

  it('honours the item cap, 500 by default', () => {
    const big = rssItems(1200);
    expect(parse(big).items).toHaveLength(500);
    const ten = parse(big, { maxItems: 10 });
    expect(ten.items.map((i) => i.title)).toEqual(Array.from({ length: 10 }, (_, i) => `Post ${i + 1}`));
  });

  it('stops reading at the item cap: what follows is never parsed', () => {
    // After five items comes nesting deep enough to be refused if it were ever read.
    const tail = '<x>'.repeat(100_000);
    const doc = rssItems(5).replace('</channel></rss>', `${tail}</channel></rss>`);
    expect(parse(doc, { maxItems: 5 }).items).toHaveLength(5);
    const error = refusal(() => parse(doc, { maxItems: 6 }));
    expect(error.code).toBe('too_deep');
    expect(error.message).toBe('Feed is nested too deeply to read');
  });

  it('keeps javascript: and data: addresses out of links and images', () => {
    const feed = parse(`<rss version="2.0"><channel><title>t</title>
      <item><title>x</title><link>javascript:alert(document.cookie)</link><guid isPermaLink="false">1</guid>
        <enclosure url="data:image/png;base64,AAAA" type="image/png"/>
        <description>&lt;img src="javascript:alert(1)"&gt;</description></item>
    </channel></rss>`);
    expect(feed.items[0]!.link).toBeNull();
    expect(feed.items[0]!.imageUrl).toBeNull();
  });

  it('never runs or keeps markup from titles and summaries', () => {
    const feed = parse(`<rss version="2.0"><channel><title>t</title>
      <item><title>&lt;script&gt;alert(1)&lt;/script&gt;Breaking &lt;b&gt;news&lt;/b&gt;</title>
        <description><![CDATA[<p onclick="x()">Hello&nbsp;<em>world</em></p><style>p{}</style><script>evil()</script>]]></description><guid>1</guid></item>
    </channel></rss>`);
    expect(feed.items[0]!.title).toBe('Breaking news');
    expect(feed.items[0]!.summary).toBe('Hello world');
  });
});

describe('parseFeed: documents that are not feeds', () => {
  it.each([
    ['', 'empty', 'Feed is empty'],
    ['   \n\t ', 'empty', 'Feed is empty'],
    ['<!DOCTYPE html><html><head><title>Shop</title></head><body><p>Hi</p></body></html>', 'not_a_feed', 'This address is a web page, not an RSS or Atom feed'],
    ['{"items": []}', 'not_a_feed', 'This address did not return an RSS or Atom feed'],
    ['<?xml version="1.0"?><urlset><url><loc>https://blog.example/</loc></url></urlset>', 'not_a_feed', 'This address did not return an RSS or Atom feed'],
  ])('refuses %j', (body, code, message) => {
    const error = refusal(() => parse(body));
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
  });

  it('names the feed an HTML page advertises', () => {
    const page = `<!DOCTYPE html><html><head><link rel="stylesheet" href="/s.css">
      <link rel="alternate" type="application/rss+xml" title="Posts" href="/feed/">
      </head><body><h1>Blog</h1></body></html>`;
    const error = refusal(() => parse(page, { url: 'https://blog.example/about' }));
    expect(error.code).toBe('not_a_feed');
    expect(error.discoveredFeedUrl).toBe('https://blog.example/feed/');
    expect(error.message).toBe('This address is a web page, not a feed; its feed is at https://blog.example/feed/');
  });
});

describe('parseFeed: recovery from real-world breakage', () => {
  it('reads past junk before the root element, a bare ampersand and unknown HTML entities', () => {
    const feed = parse(`\n\n<br />\n<b>Warning</b>: something on line 3<br />
<?xml version="1.0"?><rss version="2.0"><channel><title>AT&T News &amp; more</title>
<item><title>Caf&eacute; opens &mdash; finally</title><link>https://blog.example/cafe</link></item></channel></rss>`);
    expect(feed.title).toBe('AT&T News & more');
    expect(feed.items[0]!.title).toBe('Café opens — finally');
  });

  it('recovers from unclosed and mismatched tags', () => {
    const feed = parse(`<rss version="2.0"><channel><title>Broken</title>
      <item><title>One</title><link>https://blog.example/1</link><description>text <b>bold</description></item>
      <item><title>Two</title><link>https://blog.example/2</link></item>
    </channel>`);
    expect(feed.items.map((i) => i.title)).toEqual(['One', 'Two']);
  });

  it('drops control characters XML forbids', () => {
    const feed = parse(`<rss version="2.0"><channel><title>C\u0001\u0008ontrol</title><item><title>A\u000bB\u001fC</title><guid>1</guid></item></channel></rss>`);
    expect(feed.title).toBe('Control');
    expect(feed.items[0]!.title).toBe('ABC');
  });

  it('accepts feeds whose elements use undeclared prefixes and odd case', () => {
    const feed = parse(`<rss version="2.0"><channel><title>t</title><item><title>x</title><PubDate>Mon, 02 Jan 2023 10:00:00 GMT</PubDate>
      <media:thumbnail url="https://cdn.example/t.jpg"/></item></channel></rss>`);
    expect(feed.items[0]!.imageUrl).toBe('https://cdn.example/t.jpg');
    expect(feed.items[0]!.publishedAt).toBe(Date.UTC(2023, 0, 2, 10));
  });

  it('recognises namespaces by URI, not by prefix', () => {
    const feed = parse(`<rss version="2.0" xmlns:m="http://search.yahoo.com/mrss/" xmlns:c="http://purl.org/rss/1.0/modules/content/">
      <channel><title>t</title><item><title>x</title><m:content url="https://cdn.example/big.jpg" medium="image" width="800"/>
      <c:encoded><![CDATA[<p>Body text</p>]]></c:encoded></item></channel></rss>`);
    expect(feed.items[0]!.imageUrl).toBe('https://cdn.example/big.jpg');
    expect(feed.items[0]!.summary).toBe('Body text');
  });
});

describe('parseFeed: links and xml:base', () => {
  it('resolves Atom links against xml:base on the element and its ancestors', () => {
    const feed = parse(`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://news.example/root/">
  <title type="html">News &amp;lt;3</title>
  <link rel="alternate" href="home"/>
  <entry xml:base="section/">
    <id>tag:news.example,2024:1</id><title>One</title>
    <link rel="self" href="1.atom"/>
    <link rel="alternate" type="text/html" href="story-1"/>
    <content type="xhtml" xml:base="/media/"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hello <b>there</b></p><img src="pic.jpg"/></div></content>
    <updated>2024-03-01T10:00:00Z</updated>
  </entry>
  <entry>
    <id>tag:news.example,2024:2</id><title type="text">&lt;b&gt; is bold</title>
    <link href="/two" xml:base="https://other.example/x/"/>
    <summary type="html">&lt;p&gt;Two &amp;amp; more&lt;/p&gt;</summary>
  </entry>
</feed>`);
    expect(feed.format).toBe('atom');
    expect(feed.title).toBe('News <3');
    expect(feed.link).toBe('https://news.example/root/home');
    const [one, two] = feed.items;
    expect(one).toMatchObject({ id: 'tag:news.example,2024:1', title: 'One', link: 'https://news.example/root/section/story-1', summary: 'Hello there' });
    expect(one!.imageUrl).toBe('https://news.example/media/pic.jpg');
    expect(one!.publishedAt).toBe(Date.UTC(2024, 2, 1, 10));
    expect(two).toMatchObject({ title: '<b> is bold', link: 'https://other.example/two', summary: 'Two & more' });
  });

  it('resolves RSS links against xml:base, else the feed address', () => {
    const feed = parse(
      `<rss version="2.0"><channel xml:base="https://cdn.example/site/"><title>t</title><link>/</link>
        <item><title>a</title><link>posts/a</link></item>
        <item xml:base="https://elsewhere.example/"><title>b</title><link>b</link></item></channel></rss>`,
    );
    expect(feed.link).toBe('https://cdn.example/');
    expect(feed.items.map((i) => i.link)).toEqual(['https://cdn.example/site/posts/a', 'https://elsewhere.example/b']);
    const plain = parse(`<rss version="2.0"><channel><title>t</title><item><title>a</title><link>../a?x=1</link></item></channel></rss>`, { url: 'https://blog.example/feeds/main.xml' });
    expect(plain.items[0]!.link).toBe('https://blog.example/a?x=1');
  });

  it('takes an RSS item link from a permalink guid or atom:link when <link> is missing', () => {
    const feed = parse(`<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>t</title>
      <item><title>a</title><guid>https://blog.example/a</guid></item>
      <item><title>b</title><guid isPermaLink="false">https://blog.example/b</guid></item>
      <item><title>c</title><atom:link rel="alternate" href="https://blog.example/c"/></item></channel></rss>`);
    expect(feed.items.map((i) => i.link)).toEqual(['https://blog.example/a', null, 'https://blog.example/c']);
  });
});

describe('parseFeed: identity', () => {
  it('hashes link, title and date for items without a guid, so edits elsewhere do not change it', () => {
    const doc = (description: string, extraItem = '') =>
      `<rss version="2.0"><channel><title>t</title>${extraItem}<item><title>Same</title><link>https://blog.example/same</link>
       <pubDate>Mon, 02 Jan 2023 10:00:00 GMT</pubDate><description>${description}</description></item></channel></rss>`;
    const before = parse(doc('first version')).items[0]!.id;
    const after = parse(doc('edited text', '<item><title>New post</title><link>https://blog.example/new</link></item>')).items[1]!.id;
    expect(after).toBe(before);
    expect(before).toMatch(/^sha256:[0-9a-f]{40}$/);
    const retitled = parse(doc('first version').replace('<title>Same</title>', '<title>Other</title>')).items[0]!.id;
    expect(retitled).not.toBe(before);
  });

  it('tells apart items with only a description', () => {
    const feed = parse(`<rss version="0.92"><channel><title>t</title><item><description>one</description></item><item><description>two</description></item></channel></rss>`);
    expect(new Set(feed.items.map((i) => i.id)).size).toBe(2);
  });

  it('gives a repeated identical item its own id', () => {
    const item = '<item><description>same</description><enclosure url="https://blog.example/a.mp3" type="audio/mpeg"/></item>';
    const feed = parse(`<rss version="0.92"><channel><title>t</title>${item}${item}${item}</channel></rss>`);
    const ids = feed.items.map((i) => i.id);
    expect(new Set(ids).size).toBe(3);
    expect(parse(`<rss version="0.92"><channel><title>t</title>${item}${item}${item}</channel></rss>`).items.map((i) => i.id)).toEqual(ids);
  });

  it('hashes a guid too long to store', () => {
    const long = `urn:x:${'a'.repeat(2000)}`;
    const id = parse(`<rss version="2.0"><channel><title>t</title><item><guid>${long}</guid></item></channel></rss>`).items[0]!.id;
    expect(id).toMatch(/^sha256:/);
  });
});

describe('parseFeed: encodings', () => {
  const title = 'Café – “Ünïcödé” ½';

  it.each([
    ['utf-8 without declaration', Buffer.from(`<rss><channel><title>${title}</title></channel></rss>`, 'utf8')],
    ['utf-8 with BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`<?xml version="1.0"?><rss><channel><title>${title}</title></channel></rss>`)])],
    ['utf-16le with BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(`<?xml version="1.0" encoding="UTF-16"?><rss><channel><title>${title}</title></channel></rss>`, 'utf-16le')])],
    ['utf-16be with BOM', Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(`<?xml version="1.0" encoding="UTF-16"?><rss><channel><title>${title}</title></channel></rss>`, 'utf-16be')])],
    ['utf-16le without BOM', iconv.encode(`<?xml version="1.0" encoding="UTF-16"?><rss><channel><title>${title}</title></channel></rss>`, 'utf-16le')],
    ['declared windows-1252', iconv.encode(`<?xml version="1.0" encoding="windows-1252"?><rss><channel><title>${title}</title></channel></rss>`, 'windows-1252')],
    ['declared ISO-8859-1 holding windows-1252 punctuation', iconv.encode(`<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><title>${title}</title></channel></rss>`, 'windows-1252')],
    ['declared ISO-8859-1 but UTF-8 bytes', Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><title>${title}</title></channel></rss>`, 'utf8')],
    ['declared UTF-8 but windows-1252 bytes', iconv.encode(`<?xml version="1.0" encoding="UTF-8"?><rss><channel><title>${title}</title></channel></rss>`, 'windows-1252')],
    ['undeclared windows-1252', iconv.encode(`<rss><channel><title>${title}</title></channel></rss>`, 'windows-1252')],
  ])('%s', (_name, body) => {
    expect(parse(body).title).toBe(title);
  });

  it('uses the Content-Type charset when the document declares none', () => {
    const body = iconv.encode('<rss><channel><title>Привет, мир</title></channel></rss>', 'koi8-r');
    expect(parse(body, { contentType: 'application/rss+xml; charset=KOI8-R' }).title).toBe('Привет, мир');
  });

  it('decodes Shift_JIS and Big5 declarations', () => {
    expect(parse(iconv.encode('<?xml version="1.0" encoding="Shift_JIS"?><rss><channel><title>日本語のニュース</title></channel></rss>', 'shift_jis')).title).toBe('日本語のニュース');
    expect(parse(iconv.encode('<?xml version="1.0" encoding="Big5"?><rss><channel><title>繁體中文新聞</title></channel></rss>', 'big5')).title).toBe('繁體中文新聞');
  });
});
