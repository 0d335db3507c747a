// Reads RSS 2.0, RSS 0.91/0.92, RSS 1.0 (RDF) and Atom 1.0 documents into the
// items the RSS poller turns into notifications (spec §2 RSS Feeds;
// docs/security.md, "Untrusted content"). feed-item.ts turns one item's
// elements into a FeedItem.
//
// XML layer: htmlparser2's tokenizer in xmlMode, chosen after running the
// candidates over the 43 real-world fixtures and hostile documents:
// - It never reads a DTD: `<!DOCTYPE …>` and `<!ENTITY …>` are inert
//   declarations, only the five predefined entities and numeric references
//   are decoded, so billion-laughs and external-entity documents expand and
//   fetch nothing (unknown references stay as literal text).
// - It recovers the way real pollers must: leading whitespace before
//   `<?xml`, a bogus `<?phpxml …?>` prolog, stray control characters, bare
//   `&`, unclosed or mismatched tags. saxes (tried) reported
//   well-formedness errors on 2 of the 43 fixtures and documents that its
//   structure after an error "may be incorrect"; fast-xml-parser (and
//   @rowanmanning/feed-parser on top of it) builds the whole tree in memory,
//   so an item cap cannot bound the work, and has had entity-expansion
//   advisories; feedparser (sax) leaves charset handling and the item model
//   to us anyway.
// - It is a streaming tokenizer: the document is decoded and written in
//   slices and reading stops as soon as the item cap is reached.
// Namespaces are resolved by URI (with the conventional prefixes as the
// fallback for feeds that forget to declare them), xml:base is honoured on
// every element (XML Base, RFC 3986 §5), and identities are stable across
// polls (guid/id/rdf:about, else a hash of what the item says).
import { formatBytes } from '@herald/contracts';
import iconv from 'iconv-lite';
import { Parser } from 'htmlparser2';
import { detectFeedEncoding } from './feed-encoding';
import { feedItemOf, isImageType, linkRef, resolveHttpUrl, resolveUrl, type Captured, type FeedItem, type ItemDraft, type LinkRef } from './feed-item';
import { collapseWhitespace, looksLikeHtml, readHtml } from './feed-text';

export type { FeedItem } from './feed-item';

export const DEFAULT_FEED_MAX_ITEMS = 500;
export const DEFAULT_FEED_MAX_BYTES = 5 * 1024 * 1024;
/** What to send as `Accept` when fetching a feed. */
export const FEED_ACCEPT_HEADER = 'application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1';

export type FeedFormat = 'rss' | 'rdf' | 'atom';

export interface ParsedFeed {
  format: FeedFormat;
  title: string;
  link: string | null;
  items: FeedItem[];
}

export type FeedParseErrorCode = 'too_large' | 'empty' | 'not_a_feed' | 'too_deep';

/** A document that cannot be read as a feed; `message` is meant for the user. */
export class FeedParseError extends Error {
  constructor(
    public readonly code: FeedParseErrorCode,
    message: string,
    /** For an HTML page that advertises its feed (`<link rel="alternate" type="application/rss+xml">`). */
    public readonly discoveredFeedUrl: string | null = null,
  ) {
    super(message);
    this.name = 'FeedParseError';
  }
}

export interface ParseFeedOptions {
  /** The address the feed was fetched from: the base for relative links. */
  url: string;
  maxItems?: number;
  maxBytes?: number;
  /** The response's Content-Type; its charset counts when the document declares none. */
  contentType?: string;
}

/** Namespace URIs (lower-cased) and the vocabulary name used below. */
const VOCABULARIES: Record<string, string> = {
  'http://www.w3.org/2005/atom': 'atom',
  'http://purl.org/atom/ns#': 'atom', // Atom 0.3
  'http://purl.org/rss/1.0/': '',
  'http://my.netscape.com/rdf/simple/0.9/': '',
  'http://backend.userland.com/rss2': '',
  'http://backend.userland.com/rss': '',
  'http://www.w3.org/1999/02/22-rdf-syntax-ns#': 'rdf',
  'http://purl.org/rss/1.0/modules/content/': 'content',
  'http://purl.org/dc/elements/1.1/': 'dc',
  'http://purl.org/dc/terms/': 'dcterms',
  'http://search.yahoo.com/mrss/': 'media',
  'http://search.yahoo.com/mrss': 'media',
  'http://www.itunes.com/dtds/podcast-1.0.dtd': 'itunes',
  'http://www.w3.org/1999/xhtml': 'xhtml',
};

/** Deeper than any real feed, shallow enough that a hostile one cannot pile up work. */
const MAX_DEPTH = 256;
const WRITE_SLICE_BYTES = 64 * 1024;

interface Capture {
  depth: number;
  key: string;
  attrs: Record<string, string>;
  base: URL | null;
  text: string[];
  markup: string[];
  nested: boolean;
  target: Map<string, Captured>;
}

interface Frame {
  name: string;
  scope: ReadonlyMap<string, string>;
  base: URL | null;
}

const ITEM_TEXT_FIELDS = new Set([
  'title', 'link', 'guid', 'description', 'pubdate', 'content:encoded', 'dc:title', 'dc:description', 'dc:date', 'dcterms:issued', 'dcterms:created',
  'atom:id', 'atom:title', 'atom:summary', 'atom:content', 'atom:published', 'atom:updated', 'atom:issued', 'atom:modified',
]);
const CHANNEL_TEXT_FIELDS = new Set(['title', 'link', 'atom:title']);

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function lowerCaseKeys(attribs: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attribs)) out[name.toLowerCase()] = value;
  return out;
}

/**
 * Parses a feed document. Throws {@link FeedParseError} for a document that
 * is too large or is not a feed; everything else (bad dates, broken markup,
 * odd encodings) is recovered from.
 */
export function parseFeed(body: Buffer, options: ParseFeedOptions): ParsedFeed {
  const maxBytes = options.maxBytes ?? DEFAULT_FEED_MAX_BYTES;
  const maxItems = Math.max(1, Math.floor(options.maxItems ?? DEFAULT_FEED_MAX_ITEMS));
  if (body.length > maxBytes) throw new FeedParseError('too_large', `Feed is larger than ${formatBytes(maxBytes)}`);

  const documentBase = resolveUrl(options.url, null);
  const { encoding, bomLength } = detectFeedEncoding(body, options.contentType);

  let format: FeedFormat | null = null;
  let formatDepth = -1;
  let channelDepth = -1;
  let firstElement: string | null = null;
  let discoveredFeedUrl: string | null = null;
  let tooDeep = false;
  let done = false;

  const stack: Frame[] = [];
  const channelFields = new Map<string, Captured>();
  const channelLinks: LinkRef[] = [];
  const items: FeedItem[] = [];
  const seenIds = new Set<string>();
  let item: ItemDraft | null = null;
  let capture: Capture | null = null;

  const rootScope: ReadonlyMap<string, string> = new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]);

  function canonicalName(qname: string, scope: ReadonlyMap<string, string>): string {
    const colon = qname.indexOf(':');
    const prefix = colon === -1 ? '' : qname.slice(0, colon);
    const local = (colon === -1 ? qname : qname.slice(colon + 1)).toLowerCase();
    const uri = scope.get(prefix);
    let vocabulary = uri === undefined ? prefix.toLowerCase() : (VOCABULARIES[uri.trim().toLowerCase()] ?? prefix.toLowerCase());
    // Inside an Atom document, unqualified names are Atom's even without a declared namespace.
    if (vocabulary === '' && format === 'atom') vocabulary = 'atom';
    return vocabulary ? `${vocabulary}:${local}` : local;
  }

  function startCapture(key: string, attrs: Record<string, string>, base: URL | null, depth: number, target: Map<string, Captured>): void {
    if (target.has(key)) return;
    capture = { depth, key, attrs, base, text: [], markup: [], nested: false, target };
  }

  function finishItem(draft: ItemDraft): void {
    items.push(feedItemOf(draft, format === 'atom', seenIds));
    if (items.length >= maxItems) done = true;
  }

  function onOpen(qname: string, rawAttribs: Record<string, string>): void {
    if (done) return;
    const parent = stack[stack.length - 1];
    const attrs = lowerCaseKeys(rawAttribs);
    let scope = parent?.scope ?? rootScope;
    const declarations = Object.entries(rawAttribs).filter(([n]) => n === 'xmlns' || n.startsWith('xmlns:'));
    if (declarations.length > 0) {
      const declared = new Map(scope);
      for (const [n, uri] of declarations) declared.set(n === 'xmlns' ? '' : n.slice('xmlns:'.length), uri);
      scope = declared;
    }
    const parentBase = parent ? parent.base : documentBase;
    const base = attrs['xml:base'] ? (resolveUrl(attrs['xml:base'], parentBase) ?? parentBase) : parentBase;
    const depth = stack.length;
    if (depth >= MAX_DEPTH) {
      tooDeep = true;
      done = true;
      return;
    }
    const name = canonicalName(qname, scope);
    stack.push({ name, scope, base });
    firstElement ??= name;

    // Inside a captured element every child becomes markup (Atom xhtml content, unescaped HTML in RSS).
    if (capture) {
      const c: Capture = capture;
      c.nested = true;
      const tag = qname.slice(qname.indexOf(':') + 1).toLowerCase();
      const attributes = Object.entries(rawAttribs)
        .filter(([n]) => n !== 'xmlns' && !n.startsWith('xmlns:'))
        .map(([n, v]) => ` ${n.slice(n.indexOf(':') + 1).toLowerCase()}="${escapeHtml(v)}"`)
        .join('');
      c.markup.push(`<${tag}${attributes}>`);
      return;
    }

    if (format === null) {
      if (name === 'rss') format = 'rss';
      else if (name === 'rdf:rdf') format = 'rdf';
      else if (name === 'atom:feed' || name === 'feed') format = 'atom';
      if (format !== null) {
        formatDepth = depth;
        if (format === 'atom') channelDepth = depth;
        return;
      }
      // Not a feed (yet): an HTML page may name its feed in <head>.
      if (name === 'link' && discoveredFeedUrl === null && /(^|\s)alternate(\s|$)/i.test(attrs.rel ?? '') && /(rss|atom|rdf)\+xml/i.test(attrs.type ?? '')) {
        discoveredFeedUrl = resolveHttpUrl(attrs.href, base);
      }
      return;
    }

    if (item) {
      const direct = depth === item.depth + 1;
      if (direct && ITEM_TEXT_FIELDS.has(name)) startCapture(name, attrs, base, depth, item.fields);
      if (name === 'atom:link' && direct) {
        const ref = linkRef(attrs, base);
        item.links.push(ref);
        if (ref.href && ref.rel === 'enclosure') {
          item.enclosureUrls.push(ref.href);
          if (isImageType(ref.type, ref.href)) item.enclosureImages.push(ref.href);
        }
      } else if (name === 'enclosure' && direct) {
        const url = resolveHttpUrl(attrs.url, base);
        if (url) {
          item.enclosureUrls.push(url);
          if (isImageType(attrs.type, url)) item.enclosureImages.push(url);
        }
      } else if (name === 'media:content') {
        const url = resolveHttpUrl(attrs.url, base);
        const medium = (attrs.medium ?? '').trim().toLowerCase();
        if (url && (medium === 'image' || (medium === '' && isImageType(attrs.type, url)))) item.mediaContent.push({ url, width: Number(attrs.width) || 0 });
      } else if (name === 'media:thumbnail') {
        const url = resolveHttpUrl(attrs.url, base);
        if (url) item.mediaThumbnails.push({ url, width: Number(attrs.width) || 0 });
      } else if (name === 'itunes:image') {
        item.itunesImage ??= resolveHttpUrl(attrs.href ?? attrs.url, base);
      }
      return;
    }

    const isItem = format === 'atom' ? name === 'atom:entry' : name === 'item';
    if (isItem) {
      item = {
        depth,
        base,
        about: attrs['rdf:about'] ?? '',
        fields: new Map(),
        links: [],
        mediaContent: [],
        mediaThumbnails: [],
        enclosureImages: [],
        enclosureUrls: [],
        itunesImage: null,
      };
      return;
    }
    if (format !== 'atom' && name === 'channel' && channelDepth === -1) {
      channelDepth = depth;
      return;
    }
    if (channelDepth !== -1 && depth === channelDepth + 1) {
      if (CHANNEL_TEXT_FIELDS.has(name)) startCapture(name, attrs, base, depth, channelFields);
      if (name === 'atom:link') channelLinks.push(linkRef(attrs, base));
    }
  }

  function onText(text: string): void {
    if (done || !capture) return;
    capture.text.push(text);
    capture.markup.push(escapeHtml(text));
  }

  function onClose(): void {
    if (done) return;
    const depth = stack.length - 1;
    const frame = stack.pop();
    if (!frame) return;
    if (capture) {
      const c: Capture = capture;
      if (depth > c.depth) {
        c.markup.push(`</${frame.name.slice(frame.name.indexOf(':') + 1)}>`);
        return;
      }
      c.target.set(c.key, { text: c.text.join(''), markup: c.nested ? c.markup.join('') : null, attrs: c.attrs, base: c.base });
      capture = null;
      return;
    }
    if (item && depth === item.depth) {
      const draft = item;
      item = null;
      finishItem(draft);
      return;
    }
    if (depth === channelDepth && format !== 'atom') channelDepth = -2; // items after </channel> (RSS 1.0) still count
    if (depth === formatDepth) done = true;
  }

  const parser = new Parser(
    { onopentag: onOpen, ontext: onText, onclosetag: onClose },
    { xmlMode: true, decodeEntities: true, recognizeSelfClosing: true },
  );
  // XML 1.0 §2.2 forbids these characters; real feeds contain them anyway, so they are dropped, not fatal.
  // eslint-disable-next-line no-control-regex
  const forbidden = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
  const decoder = iconv.getDecoder(encoding, { stripBOM: true });
  for (let offset = bomLength; offset < body.length && !done; offset += WRITE_SLICE_BYTES) {
    const text = decoder.write(body.subarray(offset, offset + WRITE_SLICE_BYTES));
    if (text) parser.write(text.replace(forbidden, ''));
  }
  if (!done) {
    const rest = decoder.end();
    if (rest) parser.write(rest.replace(forbidden, ''));
    parser.end();
  }

  if (tooDeep) throw new FeedParseError('too_deep', 'Feed is nested too deeply to read');
  if (format === null) {
    if (discoveredFeedUrl) {
      throw new FeedParseError('not_a_feed', `This address is a web page, not a feed; its feed is at ${discoveredFeedUrl}`, discoveredFeedUrl);
    }
    if (firstElement === null && body.subarray(bomLength).every((b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0)) {
      throw new FeedParseError('empty', 'Feed is empty');
    }
    if (firstElement === 'html' || firstElement === 'xhtml:html') throw new FeedParseError('not_a_feed', 'This address is a web page, not an RSS or Atom feed');
    throw new FeedParseError('not_a_feed', 'This address did not return an RSS or Atom feed');
  }

  const isAtom = (format as FeedFormat) === 'atom';
  const titleField = isAtom ? channelFields.get('atom:title') : channelFields.get('title');
  const titleType = (titleField?.attrs.type ?? '').toLowerCase();
  const feedTitle = !titleField
    ? ''
    : titleField.markup !== null || (isAtom ? titleType === 'html' : looksLikeHtml(titleField.text))
      ? readHtml(titleField.markup ?? titleField.text).text
      : collapseWhitespace(titleField.text);
  const alternate = channelLinks.find((l) => l.href && (l.rel === '' || l.rel === 'alternate'))?.href ?? null;
  const channelLink = channelFields.get('link');
  const feedLink = isAtom ? alternate : (resolveHttpUrl(channelLink?.text, channelLink?.base ?? documentBase) ?? alternate);

  return { format: format as FeedFormat, title: feedTitle, link: feedLink, items };
}
