// Reading an import file as a stream (docs/product.md, "Importing
// subscribers"): a chunk at a time from disk, split into records with the
// byte offset and line number where each ends, so the job commits "read up to
// here" with every batch and a resumed import starts at that byte. CSV is RFC
// 4180 (quoted cells may hold commas, quotes and line breaks); JSON Lines is
// one object per line. Memory holds one chunk and one batch, never the file.
import fs from 'node:fs';
import type { SubscriberImportFormat } from '../../db/schema';

export interface FileRecord {
  /** Line number (1-based) of the record's first line in the file. */
  line: number;
  /** The record's text without its line break(s). */
  text: string;
  /** Byte offset just after the record (its line break included). */
  endOffset: number;
  /** Line number of the record's last line: a resumed read counts on from here. */
  endLine: number;
}

const CHUNK_BYTES = 1024 * 1024;
/** A record longer than this is not a subscription: the reader stops instead of buffering the file. */
export const MAX_RECORD_BYTES = 64 * 1024;

export class ImportFileError extends Error {}

function quotesIn(buffer: Buffer, from: number, to: number): number {
  let count = 0;
  for (let i = buffer.indexOf(0x22, from); i !== -1 && i < to; i = buffer.indexOf(0x22, i + 1)) count += 1;
  return count;
}

/**
 * The records of the file from `start` (a byte offset at a record boundary,
 * after `startLine` lines). For CSV a record goes on over line breaks while a
 * quoted cell is open (an odd number of quotes so far).
 */
export async function* readRecords(filePath: string, format: SubscriberImportFormat, start: { offset: number; line: number }): AsyncGenerator<FileRecord> {
  let pending: Buffer = Buffer.alloc(0);
  /** Byte offset of pending[0] in the file. */
  let base = start.offset;
  let line = start.line;
  /** Where the record being assembled starts in pending, its first line, its quote count, where the scan for a line break resumes. */
  let recordStart = 0;
  let recordLine = line + 1;
  let quotes = 0;
  let scanFrom = 0;

  const stream = fs.createReadStream(filePath, { start: start.offset, highWaterMark: CHUNK_BYTES });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      pending = pending.length > recordStart ? Buffer.concat([pending.subarray(recordStart), chunk]) : chunk;
      base += recordStart;
      scanFrom -= recordStart;
      recordStart = 0;
      for (;;) {
        const newline = pending.indexOf(0x0a, scanFrom);
        if (newline === -1) {
          if (pending.length - recordStart > MAX_RECORD_BYTES) throw new ImportFileError(`line ${recordLine} is longer than ${MAX_RECORD_BYTES / 1024} KB: is this a CSV or JSON Lines file?`);
          scanFrom = pending.length;
          break;
        }
        line += 1;
        if (format === 'csv') quotes += quotesIn(pending, scanFrom, newline);
        scanFrom = newline + 1;
        if (quotes % 2 === 1) continue;
        yield record(pending, recordStart, newline, recordLine, base + newline + 1, line);
        recordStart = newline + 1;
        recordLine = line + 1;
        quotes = 0;
      }
    }
  } finally {
    stream.destroy();
  }
  if (pending.length > recordStart) {
    line += 1;
    yield record(pending, recordStart, pending.length, recordLine, base + pending.length, line);
  }
}

function record(buffer: Buffer, from: number, to: number, line: number, endOffset: number, endLine: number): FileRecord {
  let end = to;
  if (end > from && buffer[end - 1] === 0x0d) end -= 1;
  let text = buffer.toString('utf8', from, end);
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { line, text, endOffset, endLine };
}

/** The cells of one CSV record (RFC 4180: `""` is a quote inside a quoted cell). */
export function csvCells(text: string): string[] {
  if (!text.includes('"')) return text.split(',');
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i += 1;
        } else quoted = false;
      } else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

/** JSON Lines when the name says so, or when the first thing in the file is `{`. */
export function detectFormat(fileName: string, firstBytes: Buffer): SubscriberImportFormat {
  if (/\.(jsonl|ndjson)$/i.test(fileName)) return 'jsonl';
  const text = firstBytes.toString('utf8').replace(/^\uFEFF/, '').trimStart();
  return text.startsWith('{') ? 'jsonl' : 'csv';
}
