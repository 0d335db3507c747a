// Feed text becomes push notification text: plain, one line, no markup.
// HTML is read with htmlparser2's HTML tokenizer (all named entities), never
// rendered or executed; only text and the first <img> source come out.
import { Parser } from 'htmlparser2';

/** Elements whose content is never text a reader sees. */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'iframe', 'object', 'svg', 'math']);
/** Elements that separate words when rendered, so their text must not run together. */
const BREAKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'details', 'div', 'dl', 'dt', 'figcaption', 'figure', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'header', 'hr', 'img', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary', 'table', 'td', 'th', 'tr', 'ul',
]);

// C0/C1 controls (except tab and newlines), non-characters and the BOM never belong in a notification.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufeff\ufffe\uffff]/g;

/** Collapses all runs of whitespace (including no-break spaces) to one space and trims. */
export function collapseWhitespace(text: string): string {
  return text.replace(INVISIBLE, '').replace(/[\s\u200b]+/g, ' ').trim();
}

export interface HtmlContent {
  text: string;
  /** The first <img> that is not a tracking pixel, as written (not yet resolved). */
  firstImageSrc: string | null;
}

function isTrackingPixel(attribs: Record<string, string>): boolean {
  const width = Number(attribs.width);
  const height = Number(attribs.height);
  return (Number.isFinite(width) && width > 0 && width <= 2) || (Number.isFinite(height) && height > 0 && height <= 2);
}

/**
 * Reads HTML into plain text (entities decoded, whitespace collapsed) and
 * finds its first image. Reading stops once `maxTextLength` characters of
 * text and an image have been found.
 */
export function readHtml(html: string, maxTextLength = Number.POSITIVE_INFINITY): HtmlContent {
  const parts: string[] = [];
  let length = 0;
  let hiddenDepth = 0;
  let firstImageSrc: string | null = null;
  let done = false;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (HIDDEN.has(name)) hiddenDepth += 1;
        if (BREAKS.has(name)) parts.push(' ');
        if (name === 'img' && firstImageSrc === null && !isTrackingPixel(attribs)) {
          const src = (attribs.src || attribs['data-src'] || attribs['data-lazy-src'] || '').trim();
          if (src && !src.startsWith('data:')) firstImageSrc = src;
          if (firstImageSrc !== null && length > maxTextLength) done = true;
        }
      },
      onclosetag(name) {
        if (HIDDEN.has(name) && hiddenDepth > 0) hiddenDepth -= 1;
        if (BREAKS.has(name)) parts.push(' ');
      },
      ontext(text) {
        if (hiddenDepth > 0 || length > maxTextLength) return;
        parts.push(text);
        length += text.length;
        if (length > maxTextLength && firstImageSrc !== null) done = true;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  // Feed HTML can be hundreds of kilobytes; feed it in slices so we can stop early.
  for (let offset = 0; offset < html.length && !done; offset += 16_384) parser.write(html.slice(offset, offset + 16_384));
  if (!done) parser.end();
  return { text: collapseWhitespace(parts.join('')), firstImageSrc };
}

/**
 * Whether text that a feed did not label may be HTML: a closing tag, a line
 * break or image tag, or an entity reference. The same test the Universal
 * Feed Parser applies to RSS titles and descriptions, which carry no type.
 */
export function looksLikeHtml(text: string): boolean {
  return /<\/[a-z][a-z0-9-]*\s*>|<(?:br|img|hr|p)\b[^>]*>|&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/i.test(text);
}

/** Shortens text to at most `max` characters at a word boundary, ending with an ellipsis. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  // Never split a surrogate pair (an emoji): half of one is not a character and becomes U+FFFD on the wire.
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
