// Which character encoding a feed's bytes are in. Real feeds lie: the
// fixtures include a UTF-8 file that declares ISO-8859-1 (laut.de), Latin-1
// bytes with no declaration at all (UOL), a GB2312 declaration and BOMs with
// and without a prolog. The order of evidence follows XML 1.0 Appendix F and
// RFC 7303 §3.6 (BOM, then the declaration, then the transport's charset),
// corrected by what the bytes themselves prove: text that is valid UTF-8 with
// multi-byte sequences is UTF-8 whatever a legacy label says, and bytes that
// are not UTF-8 at all are read as windows-1252, which is what browsers do
// for "ISO-8859-1" and for unlabelled Western text (WHATWG Encoding).
import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';

export interface FeedEncoding {
  /** An iconv-lite encoding name. */
  encoding: string;
  /** Bytes of byte-order mark to skip. */
  bomLength: number;
}

const WINDOWS_1252_LABELS = new Set([
  'ansi_x3.4-1968', 'ascii', 'cp1252', 'cp819', 'csisolatin1', 'ibm819', 'iso-8859-1', 'iso-ir-100', 'iso8859-1', 'iso88591',
  'iso_8859-1', 'iso_8859-1:1987', 'l1', 'latin1', 'us-ascii', 'windows-1252', 'x-cp1252',
]);
const GB18030_LABELS = new Set(['chinese', 'csgb2312', 'csiso58gb231280', 'gb2312', 'gb_2312', 'gb_2312-80', 'gbk', 'iso-ir-58', 'x-gbk', 'cp936', 'gb18030']);
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);
const UTF16_LABELS = new Set(['utf-16', 'utf-16le', 'utf-16be', 'utf16', 'ucs-2', 'unicode', 'csunicode', 'iso-10646-ucs-2']);

type Label = { kind: 'utf-8' } | { kind: 'utf-16' } | { kind: 'legacy'; encoding: string } | { kind: 'unknown' };

function interpretLabel(raw: string | undefined): Label | null {
  if (!raw) return null;
  const label = raw.trim().toLowerCase();
  if (UTF8_LABELS.has(label)) return { kind: 'utf-8' };
  if (UTF16_LABELS.has(label)) return { kind: 'utf-16' };
  if (WINDOWS_1252_LABELS.has(label)) return { kind: 'legacy', encoding: 'windows-1252' };
  if (GB18030_LABELS.has(label)) return { kind: 'legacy', encoding: 'gb18030' };
  if (iconv.encodingExists(label)) return { kind: 'legacy', encoding: label };
  return { kind: 'unknown' };
}

/** The `encoding="…"` of an XML declaration at the start (after optional whitespace). */
export function declaredXmlEncoding(body: Buffer): string | undefined {
  const head = body.subarray(0, 1024).toString('latin1');
  return /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']\s*([A-Za-z0-9._:-]+)\s*["']/.exec(head)?.[1];
}

/** The charset parameter of a Content-Type header. */
export function charsetFromContentType(contentType: string | undefined): string | undefined {
  return contentType ? /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1] : undefined;
}

interface Utf8Evidence {
  /** Complete, well-formed multi-byte sequences (at least 1 when there are any, for valid input). */
  multiByte: number;
  /** Bytes that cannot be part of well-formed UTF-8. */
  invalid: number;
}

/** Counts well-formed multi-byte UTF-8 sequences and stray bytes (RFC 3629 §4). */
function utf8Evidence(bytes: Buffer): Utf8Evidence {
  if (isUtf8(bytes)) return { multiByte: bytes.some((b) => b >= 0x80) ? 1 : 0, invalid: 0 };
  let multiByte = 0;
  let invalid = 0;
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    let length = 0;
    let min = 0;
    if (b >= 0xc2 && b <= 0xdf) [length, min] = [2, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [length, min] = [3, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [length, min] = [4, 0x10000];
    if (length === 0 || i + length > bytes.length) {
      invalid += 1;
      i += 1;
      continue;
    }
    let codePoint = b & (0xff >> (length + 1));
    let ok = true;
    for (let k = 1; k < length; k += 1) {
      const c = bytes[i + k] as number;
      if ((c & 0xc0) !== 0x80) {
        ok = false;
        break;
      }
      codePoint = (codePoint << 6) | (c & 0x3f);
    }
    if (ok && codePoint >= min && codePoint <= 0x10ffff && !(codePoint >= 0xd800 && codePoint <= 0xdfff)) {
      multiByte += 1;
      i += length;
    } else {
      invalid += 1;
      i += 1;
    }
  }
  return { multiByte, invalid };
}

/** UTF-8 when the bytes say so, otherwise windows-1252. */
function guessFromBytes(evidence: Utf8Evidence): string {
  if (evidence.invalid === 0) return 'utf-8';
  // A few stray bytes in otherwise UTF-8 text stay UTF-8 (they become U+FFFD);
  // Latin-1 text almost never forms well-formed multi-byte sequences.
  return evidence.multiByte > evidence.invalid ? 'utf-8' : 'windows-1252';
}

/** Decides how to decode a feed document. */
export function detectFeedEncoding(body: Buffer, contentType?: string): FeedEncoding {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return { encoding: 'utf-8', bomLength: 3 };
  if (body[0] === 0xff && body[1] === 0xfe) return { encoding: 'utf-16le', bomLength: 2 };
  if (body[0] === 0xfe && body[1] === 0xff) return { encoding: 'utf-16be', bomLength: 2 };
  // UTF-16 without a BOM shows as "<" next to a zero byte (XML 1.0 Appendix F.1).
  if (body[0] === 0x00 && body[1] === 0x3c && body[2] === 0x00) return { encoding: 'utf-16be', bomLength: 0 };
  if (body[0] === 0x3c && body[1] === 0x00 && body[3] === 0x00) return { encoding: 'utf-16le', bomLength: 0 };

  const label = interpretLabel(declaredXmlEncoding(body)) ?? interpretLabel(charsetFromContentType(contentType));
  const evidence = utf8Evidence(body);
  if (!label || label.kind === 'unknown' || label.kind === 'utf-16') {
    // A UTF-16 label that we could read as ASCII is wrong by construction.
    return { encoding: guessFromBytes(evidence), bomLength: 0 };
  }
  if (label.kind === 'utf-8') return { encoding: guessFromBytes(evidence), bomLength: 0 };
  // A legacy label on bytes that are well-formed UTF-8 with multi-byte text is a mislabel.
  if (evidence.invalid === 0 && evidence.multiByte > 0) return { encoding: 'utf-8', bomLength: 0 };
  return { encoding: label.encoding, bomLength: 0 };
}
