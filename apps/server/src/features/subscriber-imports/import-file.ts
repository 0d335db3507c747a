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

/** Where a CSV record's scan stands at the end of a line: inside a quoted cell, and whether a cell has just begun. */
interface QuoteState {
  quoted: boolean;
  cellStart: boolean;
}

const QUOTE = 0x22;
const COMMA = 0x2c;

/**
 * Scans one line of a CSV record. A quote opens a quoted cell only where a
 * cell begins (RFC 4180 §2.5); elsewhere, as in `Chrome 5" tablet`, it is a
 * character of the cell, so a stray quote cannot swallow the lines after it.
 */
function scanQuotes(buffer: Buffer, from: number, to: number, state: QuoteState): void {
  // Most lines hold no quote: nothing changes but that the next line starts a cell (or continues the quoted one).
  if (!state.quoted) {
    const first = buffer.indexOf(QUOTE, from);
    if (first === -1 || first >= to) return;
  }
  for (let i = from; i < to; i += 1) {
    const c = buffer[i];
    if (state.quoted) {
      if (c !== QUOTE) continue;
      if (i + 1 < to && buffer[i + 1] === QUOTE) i += 1;
      else state.quoted = false;
    } else if (c === QUOTE && state.cellStart) {
      state.quoted = true;
      state.cellStart = false;
    } else state.cellStart = c === COMMA;
  }
}

/**
 * The records of the file from `start` (a byte offset at a record boundary,
 * after `startLine` lines). For CSV a record goes on over line breaks while a
 * quoted cell is open (one whose first character was a quote).
 */
export async function* readRecords(filePath: string, format: SubscriberImportFormat, start: { offset: number; line: number }): AsyncGenerator<FileRecord> {
  let pending: Buffer = Buffer.alloc(0);
  /** Byte offset of pending[0] in the file. */
  let base = start.offset;
  let line = start.line;
  /** Where the record being assembled starts in pending, its first line, its quoting, where the scan for a line break resumes. */
  let recordStart = 0;
  let recordLine = line + 1;
  const quoting: QuoteState = { quoted: false, cellStart: true };
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
        if (format === 'csv') scanQuotes(pending, scanFrom, newline, quoting);
        scanFrom = newline + 1;
        if (quoting.quoted) continue;
        yield record(pending, recordStart, newline, recordLine, base + newline + 1, line);
        recordStart = newline + 1;
        recordLine = line + 1;
        quoting.cellStart = true;
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

/** The cells of one CSV record (RFC 4180: `""` is a quote inside a quoted cell; a quote inside an unquoted cell is kept as it is). */
export function csvCells(text: string): string[] {
  if (!text.includes('"')) return text.split(',');
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  let cellStart = true;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i += 1;
        } else quoted = false;
      } else cell += c;
    } else if (c === '"' && cellStart) {
      quoted = true;
      cellStart = false;
    } else if (c === ',') {
      cells.push(cell);
      cell = '';
      cellStart = true;
    } else {
      cell += c;
      cellStart = false;
    }
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
