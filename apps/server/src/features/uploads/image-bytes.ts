import type { UploadImageType } from '@herald/contracts';

// An upload's type is decided by its bytes, never by its name or declared
// Content-Type (docs/security.md, "Untrusted content"), and its pixel size is
// read from the format's own header so absurd images are refused before
// anyone decodes them.

export interface ImageInfo {
  contentType: UploadImageType;
  extension: 'jpg' | 'png' | 'gif' | 'webp';
  width: number;
  height: number;
  /** Bytes up to the end of the structure that holds the dimensions. */
  headerLength: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ascii(bytes: Buffer, start: number, length: number): string {
  return bytes.subarray(start, start + length).toString('latin1');
}

/** PNG: signature, then the IHDR chunk first (PNG spec §5.2, §11.2.2). */
function readPng(bytes: Buffer): ImageInfo | undefined {
  if (bytes.length < 33 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  if (bytes.readUInt32BE(8) !== 13 || ascii(bytes, 12, 4) !== 'IHDR') return undefined;
  return { contentType: 'image/png', extension: 'png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), headerLength: 33 };
}

/** GIF: "GIF87a"/"GIF89a", then the logical screen descriptor's width and height, little-endian (GIF89a §18). */
function readGif(bytes: Buffer): ImageInfo | undefined {
  const signature = ascii(bytes, 0, 6);
  if (bytes.length < 13 || (signature !== 'GIF87a' && signature !== 'GIF89a')) return undefined;
  return { contentType: 'image/gif', extension: 'gif', width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8), headerLength: 13 };
}

/** Start-of-frame markers carry the frame size; C4 (DHT), C8 (reserved) and CC (DAC) share the range but do not. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** JPEG: walks the marker segments from SOI to the first SOFn (ITU T.81 §B.2). */
function readJpeg(bytes: Buffer): ImageInfo | undefined {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8 || bytes[2] !== 0xff) return undefined;
  let offset = 2;
  while (offset < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    while (offset < bytes.length && bytes[offset] === 0xff) offset += 1; // fill bytes
    const marker = bytes[offset];
    offset += 1;
    if (marker === undefined) return undefined;
    // Markers without a length: TEM, RSTn, and a stray SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    // End of image or start of scan before any frame header: not a usable JPEG.
    if (marker === 0xd9 || marker === 0xda) return undefined;
    if (offset + 2 > bytes.length) return undefined;
    const segmentLength = bytes.readUInt16BE(offset);
    if (segmentLength < 2) return undefined;
    if (isStartOfFrame(marker)) {
      if (segmentLength < 8 || offset + 7 > bytes.length) return undefined;
      return {
        contentType: 'image/jpeg',
        extension: 'jpg',
        height: bytes.readUInt16BE(offset + 3),
        width: bytes.readUInt16BE(offset + 5),
        headerLength: offset + segmentLength,
      };
    }
    offset += segmentLength;
  }
  return undefined;
}

/** WebP: RIFF container, then a VP8 (lossy), VP8L (lossless) or VP8X (extended) chunk (RFC 9649). */
function readWebp(bytes: Buffer): ImageInfo | undefined {
  if (bytes.length < 30 || ascii(bytes, 0, 4) !== 'RIFF' || ascii(bytes, 8, 4) !== 'WEBP') return undefined;
  const chunk = ascii(bytes, 12, 4);
  const base = { contentType: 'image/webp', extension: 'webp', headerLength: 30 } as const;
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height (RFC 6386 §9.1).
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined;
    return { ...base, width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  }
  if (chunk === 'VP8L') {
    // Signature 0x2f, then 14 bits of width - 1 and 14 bits of height - 1 (RFC 9649 §3.2).
    if (bytes[20] !== 0x2f) return undefined;
    const bits = bytes.readUInt32LE(21);
    return { ...base, width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') {
    // Canvas width - 1 and height - 1, 24 bits each (RFC 9649 §2.7).
    return { ...base, width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
  }
  return undefined;
}

/** The image type and pixel size from the file's own bytes, or undefined for anything but JPEG, PNG, GIF or WebP. */
export function identifyImage(bytes: Buffer): ImageInfo | undefined {
  return readPng(bytes) ?? readGif(bytes) ?? readJpeg(bytes) ?? readWebp(bytes);
}

// Markup that would let the file act as a page if a browser ever sniffed it
// (HTML-in-GIF and similar polyglots). Matched case-insensitively.
const MARKUP = ['<html', '<script', '<svg', '<!doctype', '<body', '<head', '<iframe', '<object', '<embed', '<meta', '<?php'];

/** Bytes scanned for markup beyond the header (the task's "first KB after the header"). */
export const MARKUP_SCAN_BYTES = 1024;

/** True when the header or the kilobyte after it holds HTML, SVG or script markup. */
export function containsMarkup(bytes: Buffer, headerLength: number): boolean {
  const window = bytes.subarray(0, headerLength + MARKUP_SCAN_BYTES).toString('latin1').toLowerCase();
  return MARKUP.some((tag) => window.includes(tag));
}
