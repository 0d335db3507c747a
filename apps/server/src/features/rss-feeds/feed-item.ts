// One feed item, from the elements the parser captured to a FeedItem: which
// link, title, summary and image it has, and an identity that is stable across
// polls and unique within the document.
import { createHash } from 'node:crypto';
import { parseFeedDate } from './feed-dates';
import { collapseWhitespace, looksLikeHtml, readHtml, truncateText } from './feed-text';

/** Longest summary kept per item; a push notification shows far less. */
export const FEED_SUMMARY_MAX_LENGTH = 1000;
const MAX_GUID_LENGTH = 512;
const IMAGE_EXTENSION = /\.(?:jpe?g|png|gif|webp|avif|bmp)(?:$|[?#])/i;

export interface FeedItem {
  /**
   * Stable across polls and unique within the document: guid / atom:id /
   * rdf:about, else `sha256:` of link, title and date (or description).
   */
  id: string;
  /** The guid / atom:id / rdf:about the publisher declared, or null (a repeated guid keeps it; `id` differs). */
  guid: string | null;
  /** Plain text; empty when the item has none (the caller writes a notification from the summary). */
  title: string;
  /** Absolute http(s) URL, or null. */
  link: string | null;
  /** Plain text (HTML stripped, entities decoded, whitespace collapsed), at most FEED_SUMMARY_MAX_LENGTH characters. */
  summary: string;
  /** Absolute http(s) URL of the item's image, or null. */
  imageUrl: string | null;
  /** Milliseconds since the epoch, or null when absent or unreadable. */
  publishedAt: number | null;
  /** Without a guid, an item saying exactly what an earlier one of the document says (the same item listed twice). */
  repeatsEarlierItem: boolean;
}

export interface Captured {
  /** Character data, entities decoded. */
  text: string;
  /** Serialized HTML when the element had child elements (Atom xhtml, unescaped HTML in RSS), else null. */
  markup: string | null;
  attrs: Record<string, string>;
  /** xml:base in force on the element. */
  base: URL | null;
}

export interface ImageCandidate {
  url: string;
  width: number;
}

export interface LinkRef {
  rel: string;
  type: string;
  /** Resolved http(s) address, or null. */
  href: string | null;
  /** As written, for identities that must not depend on the feed's address. */
  raw: string;
}

export function linkRef(attrs: Record<string, string>, base: URL | null): LinkRef {
  return {
    rel: (attrs.rel ?? '').trim().toLowerCase(),
    type: (attrs.type ?? '').trim().toLowerCase(),
    href: resolveHttpUrl(attrs.href, base),
    raw: (attrs.href ?? '').trim(),
  };
}

export interface ItemDraft {
  depth: number;
  base: URL | null;
  about: string;
  fields: Map<string, Captured>;
  links: LinkRef[];
  mediaContent: ImageCandidate[];
  mediaThumbnails: ImageCandidate[];
  enclosureImages: string[];
  enclosureUrls: string[];
  itunesImage: string | null;
}

export function resolveUrl(raw: string | undefined, base: URL | null): URL | null {
  const value = raw?.trim();
  if (!value) return null;
  try {
    return base ? new URL(value, base) : new URL(value);
  } catch {
    return null;
  }
}

/** Only http(s) addresses leave the parser: a `javascript:` link must never become a click destination. */
export function resolveHttpUrl(raw: string | undefined, base: URL | null): string | null {
  const url = resolveUrl(raw, base);
  return url && (url.protocol === 'http:' || url.protocol === 'https:') ? url.href : null;
}

function sha256(value: string): string {
  return `sha256:${createHash('sha256').update(value).digest('hex').slice(0, 40)}`;
}

function largest(candidates: ImageCandidate[]): string | null {
  let best: ImageCandidate | undefined;
  for (const c of candidates) if (!best || c.width > best.width) best = c;
  return best?.url ?? null;
}

export function isImageType(type: string | undefined, url: string): boolean {
  const t = (type ?? '').trim().toLowerCase();
  if (t) return t.startsWith('image/');
  return IMAGE_EXTENSION.test(url);
}

export function feedItemOf(draft: ItemDraft, atom: boolean, seenIds: Set<string>): FeedItem {
  const f = draft.fields;
  const plain = (c: Captured | undefined): string => {
    if (!c) return '';
    if (c.markup !== null) return readHtml(c.markup).text;
    const type = (c.attrs.type ?? '').toLowerCase();
    const isHtml = atom ? type === 'html' || type === 'text/html' : looksLikeHtml(c.text);
    return isHtml ? readHtml(c.text).text : collapseWhitespace(c.text);
  };
  const htmlOf = (c: Captured | undefined): string | null => {
    if (!c) return null;
    if (c.markup !== null) return c.markup;
    const type = (c.attrs.type ?? '').toLowerCase();
    const isHtml = atom ? type === 'html' || type === 'text/html' : looksLikeHtml(c.text);
    return isHtml ? c.text : null;
  };

  const title = plain(atom ? f.get('atom:title') : (f.get('title') ?? f.get('dc:title')));

  let link: string | null = null;
  if (atom) {
    const alternates = draft.links.filter((l) => l.href && (l.rel === '' || l.rel === 'alternate'));
    link = (alternates.find((l) => l.type === '' || l.type.includes('html')) ?? alternates[0])?.href ?? null;
  } else {
    const linkField = f.get('link');
    link = resolveHttpUrl(linkField?.text || linkField?.attrs.href, linkField?.base ?? draft.base);
    link ??= draft.links.find((l) => l.href && (l.rel === '' || l.rel === 'alternate'))?.href ?? null;
    const guid = f.get('guid');
    if (!link && guid && (guid.attrs.ispermalink ?? 'true').trim().toLowerCase() !== 'false') link = resolveHttpUrl(guid.text, null);
    link ??= resolveHttpUrl(draft.about, null);
  }

  const summarySources = atom ? [f.get('atom:summary'), f.get('atom:content')] : [f.get('description'), f.get('content:encoded'), f.get('dc:description')];
  let summary = '';
  let contentImage: string | null = null;
  for (const source of summarySources) {
    if (!source) continue;
    const html = htmlOf(source);
    const read = html !== null ? readHtml(html, FEED_SUMMARY_MAX_LENGTH + 1) : { text: collapseWhitespace(source.text), firstImageSrc: null };
    if (!summary && read.text) summary = truncateText(read.text, FEED_SUMMARY_MAX_LENGTH);
    if (!contentImage && read.firstImageSrc) contentImage = resolveHttpUrl(read.firstImageSrc, source.base);
    if (summary && contentImage) break;
  }

  const imageUrl =
    largest(draft.mediaContent) ??
    draft.enclosureImages[0] ??
    largest(draft.mediaThumbnails) ??
    draft.itunesImage ??
    contentImage;

  const dateKeys = atom
    ? ['atom:published', 'atom:issued', 'atom:updated', 'atom:modified', 'dc:date']
    : ['pubdate', 'dc:date', 'dcterms:issued', 'dcterms:created', 'atom:published', 'atom:updated'];
  const rawDates = dateKeys.map((k) => f.get(k)?.text.trim() ?? '').filter(Boolean);
  let publishedAt: number | null = null;
  for (const raw of rawDates) {
    publishedAt = parseFeedDate(raw);
    if (publishedAt !== null) break;
  }

  const declaredId = collapseWhitespace(atom ? (f.get('atom:id')?.text ?? '') : (f.get('guid')?.text ?? '')) || draft.about.trim();
  let id: string;
  if (declaredId) {
    id = declaredId.length <= MAX_GUID_LENGTH ? declaredId : sha256(declaredId);
  } else {
    // No guid: what the item says identifies it. The raw link (not the resolved
    // one) keeps the id stable if the feed's own address changes.
    const rawLink = collapseWhitespace(atom ? (draft.links.find((l) => l.rel === '' || l.rel === 'alternate')?.raw ?? '') : (f.get('link')?.text ?? ''));
    const dateOrDescription = rawDates[0] ?? summary;
    const fallback = rawLink || title || dateOrDescription ? '' : draft.enclosureUrls.join(' ');
    id = sha256(JSON.stringify([rawLink, title, dateOrDescription, fallback]));
  }
  // Without a guid the id is what the item says: the same id again is the same item, listed twice.
  const repeatsEarlierItem = !declaredId && seenIds.has(id);
  if (seenIds.has(id)) {
    // A publisher that reuses a guid (scripting.com gives two posts one guid) or
    // repeats an item: the later occurrence gets an id derived from what it says,
    // stable across polls as long as the document keeps its order.
    const derived = sha256(JSON.stringify([id, link ?? '', title, rawDates[0] ?? '', summary]));
    id = derived;
    for (let n = 2; seenIds.has(id); n += 1) id = `${derived}#${n}`;
  }
  seenIds.add(id);
  return { id, guid: declaredId || null, title, link, summary, imageUrl, publishedAt, repeatsEarlierItem };
}
