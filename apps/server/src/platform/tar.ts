// The little of the tar format (POSIX ustar, IEEE Std 1003.1-2001 "pax"
// interchange format) that Herald's backups need: regular files and
// folders, written and read as streams, gzip-compressed. Readable by any
// `tar -xzf`; `herald restore` reads only what `herald backup` writes.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

const BLOCK = 512;

export interface TarEntry {
  /** Relative path with `/` separators, e.g. `uploads/abc.png`. */
  name: string;
  /** Size in bytes (known before the content is read: tar writes it first). */
  size: number;
  mode: number;
  mtimeMs: number;
  /** The content: a file to stream, or bytes. */
  source: { file: string } | { bytes: Buffer };
}

function writeString(header: Buffer, value: string, offset: number, length: number): void {
  header.write(value, offset, Math.min(Buffer.byteLength(value), length), 'utf8');
}

function writeOctal(header: Buffer, value: number, offset: number, length: number): void {
  header.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

/** A 512-byte ustar header; sizes from 8 GiB up in GNU base-256, as GNU and bsdtar read them. */
function header(name: string, size: number, mode: number, mtimeMs: number, type: '0' | '5'): Buffer {
  const block = Buffer.alloc(BLOCK);
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    // ustar splits a long path at a `/` into prefix (155) and name (100).
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100) throw new Error(`Path too long for the backup archive: ${name}`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  writeString(block, base, 0, 100);
  writeOctal(block, mode & 0o7777, 100, 8);
  writeOctal(block, 0, 108, 8);
  writeOctal(block, 0, 116, 8);
  if (size < 8 ** 11) writeOctal(block, size, 124, 12);
  else {
    block[124] = 0x80;
    let rest = BigInt(size);
    for (let i = 135; i > 124; i--) {
      block[i] = Number(rest & 0xffn);
      rest >>= 8n;
    }
  }
  writeOctal(block, Math.floor(mtimeMs / 1000), 136, 12);
  block.fill(' ', 148, 156);
  block.write(type, 156, 1, 'ascii');
  block.write('ustar\0', 257, 6, 'ascii');
  block.write('00', 263, 2, 'ascii');
  writeString(block, prefix, 345, 155);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return block;
}

async function* tarBlocks(entries: AsyncIterable<TarEntry> | Iterable<TarEntry>): AsyncGenerator<Buffer> {
  const folders = new Set<string>();
  for await (const entry of entries) {
    // Folders first, so an extracting tar creates them with a private mode.
    const parts = entry.name.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const folder = `${parts.slice(0, i).join('/')}/`;
      if (folders.has(folder)) continue;
      folders.add(folder);
      yield header(folder, 0, 0o700, entry.mtimeMs, '5');
    }
    yield header(entry.name, entry.size, entry.mode, entry.mtimeMs, '0');
    let written = 0;
    if ('bytes' in entry.source) {
      written = entry.source.bytes.length;
      yield entry.source.bytes;
    } else {
      for await (const chunk of fs.createReadStream(entry.source.file, { start: 0, end: entry.size - 1 })) {
        written += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
    }
    if (written !== entry.size) throw new Error(`${entry.name} changed size while it was archived (${entry.size} → ${written} bytes)`);
    const padding = (BLOCK - (entry.size % BLOCK)) % BLOCK;
    if (padding) yield Buffer.alloc(padding);
  }
  // Two zero blocks end the archive.
  yield Buffer.alloc(BLOCK * 2);
}

/** Writes `entries` as a .tar.gz to `file` (created with mode 0600: a backup holds secrets). */
export async function writeTarGz(file: string, entries: AsyncIterable<TarEntry> | Iterable<TarEntry>): Promise<void> {
  await pipeline(Readable.from(tarBlocks(entries)), zlib.createGzip(), fs.createWriteStream(file, { mode: 0o600 }));
}

export interface TarFileHeader {
  name: string;
  size: number;
}

function parseOctal(block: Buffer, offset: number, length: number): number {
  if (block[offset]! & 0x80) {
    let value = 0n;
    for (let i = offset + 1; i < offset + length; i++) value = (value << 8n) | BigInt(block[i]!);
    return Number(value);
  }
  const text = block.toString('ascii', offset, offset + length).replace(/\0.*$/s, '').trim();
  return text ? parseInt(text, 8) : 0;
}

function readString(block: Buffer, offset: number, length: number): string {
  return block.toString('utf8', offset, offset + length).replace(/\0.*$/s, '');
}

/** A byte source read exactly: `take(n)` resolves with the next n bytes. */
class ExactReader {
  private buffered: Buffer[] = [];
  private size = 0;
  constructor(private readonly chunks: AsyncIterator<Buffer>) {}

  /** The next bytes, at most `max`, or undefined at the end of the stream. */
  async some(max: number): Promise<Buffer | undefined> {
    if (!this.size) {
      const next = await this.chunks.next();
      if (next.done) return undefined;
      this.buffered.push(next.value);
      this.size += next.value.length;
    }
    const joined = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const taken = joined.subarray(0, max);
    const rest = joined.subarray(taken.length);
    this.buffered = rest.length ? [rest] : [];
    this.size = rest.length;
    return taken;
  }

  async take(n: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    let got = 0;
    while (got < n) {
      const part = await this.some(n - got);
      if (!part) throw new Error('The backup archive ends early (truncated or not a Herald backup)');
      parts.push(part);
      got += part.length;
    }
    return Buffer.concat(parts);
  }
}

/**
 * Reads a .tar.gz made by writeTarGz. `onFile` decides where each regular
 * file goes: a path to write it to (created with mode 0600), or undefined to
 * skip it. Folders are not reported (their files are).
 */
export async function readTarGz(file: string, onFile: (entry: TarFileHeader) => string | undefined | Promise<string | undefined>): Promise<void> {
  const stream = fs.createReadStream(file).pipe(zlib.createGunzip());
  const reader = new ExactReader(stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>);
  try {
    for (;;) {
      const block = await reader.take(BLOCK);
      if (block.every((byte) => byte === 0)) return;
      let checksum = 0;
      for (let i = 0; i < BLOCK; i++) checksum += i >= 148 && i < 156 ? 32 : block[i]!;
      if (checksum !== parseOctal(block, 148, 8)) throw new Error('The backup archive is damaged (a header checksum does not match)');
      const prefix = readString(block, 345, 155);
      const name = prefix ? `${prefix}/${readString(block, 0, 100)}` : readString(block, 0, 100);
      const size = parseOctal(block, 124, 12);
      const type = String.fromCharCode(block[156]!);
      const padding = (BLOCK - (size % BLOCK)) % BLOCK;
      const target = type === '0' || type === '\0' ? await onFile({ name, size }) : undefined;
      if (target) {
        fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
        const out = fs.createWriteStream(target, { mode: 0o600, flags: 'wx' });
        for (let left = size; left > 0; ) {
          const part = await reader.some(left);
          if (!part) throw new Error('The backup archive ends early (truncated or not a Herald backup)');
          left -= part.length;
          if (!out.write(part)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        }
        await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
      } else {
        for (let left = size; left > 0; ) left -= (await reader.take(Math.min(left, 1 << 20))).length;
      }
      if (padding) await reader.take(padding);
    }
  } finally {
    stream.destroy();
  }
}
