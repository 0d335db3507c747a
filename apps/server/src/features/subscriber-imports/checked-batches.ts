// The reading half of an import (docs/product.md, "Importing subscribers"):
// the file from a resume point, each row checked (import-row.ts), in batches
// that carry the offset they end at. A large file is read on a worker thread
// (reader-thread.ts), so reading and checking the next batch overlaps writing
// this one; on SQLite, whose writes run on the calling thread, the two used
// to add up. Both ways run the same generator and give the same batches.
import { Worker } from 'node:worker_threads';
import type { SubscriberImportFormat } from '../../db/schema';
import { ImportFileError, readRecords } from './import-file';
import { checkRow, csvColumns, csvFields, jsonFields, type ImportedRow, type RejectedRow, type RowContext } from './import-row';

export interface ReadStart {
  filePath: string;
  format: SubscriberImportFormat;
  /** Byte offset and line count of the resume point (a record boundary). */
  position: { offset: number; line: number };
  /** The CSV header's columns, when an earlier batch read it. */
  columns: string[] | null;
  context: RowContext;
  batchSize: number;
}

export interface CheckedBatch {
  rows: Array<ImportedRow | RejectedRow>;
  /** Where the file was read up to: the next resume point once this batch is stored. */
  position: { offset: number; line: number };
  /** The header's columns as JSON, on the batch that read the header. */
  columns?: string;
}

/** The CSV header lacks a required column: the import fails with this text. */
export class ImportHeaderError extends Error {}

/** The batches of the file from its resume point; the last one may be empty (it still moves the resume point to the end). */
export async function* checkedBatches(start: ReadStart): AsyncGenerator<CheckedBatch> {
  let columns = start.columns;
  let newColumns: string | undefined;
  let position = start.position;
  let rows: Array<ImportedRow | RejectedRow> = [];
  for await (const record of readRecords(start.filePath, start.format, position)) {
    position = { offset: record.endOffset, line: record.endLine };
    if (!record.text.trim()) continue;
    if (start.format === 'csv' && !columns) {
      const header = csvColumns(record.text);
      if ('error' in header) throw new ImportHeaderError(header.error);
      columns = header.columns;
      newColumns = JSON.stringify(columns);
      continue;
    }
    rows.push(checkRow(record.line, start.format === 'csv' ? csvFields(record.text, columns!) : jsonFields(record.text), start.context));
    if (rows.length >= start.batchSize) {
      yield { rows, position, columns: newColumns };
      rows = [];
      newColumns = undefined;
    }
  }
  yield { rows, position, columns: newColumns };
}

/** Files smaller than this are read on the calling thread: starting a thread would cost more than it saves. */
const THREAD_FROM_BYTES = 4 * 1024 * 1024;
/** Batches the reader thread may have ready ahead of the writer: memory stays at a few batches whatever the file size. */
const BATCHES_AHEAD = 2;

/** What the reader thread posts. */
export type ReaderMessage = { batch: CheckedBatch } | { end: true } | { error: { message: string; kind: 'file' | 'header' | 'other' } };

// In the bundle (dist/main.js) the reader is its own entry, dist/subscriber-import-reader.js
// (build.mjs); from source (tests, `npm run dev`) it is the .ts file, run through tsx.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const READER_URL = new URL(FROM_SOURCE ? './reader-thread.ts' : './subscriber-import-reader.js', import.meta.url);

/**
 * The same batches as checkedBatches(), read on a worker thread when the
 * rest of the file is large (`thread: 'auto'`), or always / never. Ending
 * the iteration early (an error, a lost claim) stops the thread.
 */
export async function* checkedBatchesOf(start: ReadStart, remainingBytes: number, thread: 'auto' | 'always' | 'never' = 'auto'): AsyncGenerator<CheckedBatch> {
  if (thread === 'never' || (thread === 'auto' && remainingBytes < THREAD_FROM_BYTES)) {
    yield* checkedBatches(start);
    return;
  }
  const worker = new Worker(READER_URL, { workerData: start, name: 'herald-import-reader', execArgv: FROM_SOURCE ? ['--import', 'tsx'] : undefined });
  const ready: ReaderMessage[] = [];
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  const push = (message: ReaderMessage) => {
    ready.push(message);
    wake?.();
  };
  worker.on('message', push);
  worker.on('error', (error) => {
    failure = error;
    wake?.();
  });
  worker.on('exit', (code) => {
    if (code !== 0 && !failure) failure = new Error(`the import reader thread exited with code ${code}`);
    wake?.();
  });
  try {
    // The thread starts with BATCHES_AHEAD credits and gets one back per batch taken.
    worker.postMessage({ credit: BATCHES_AHEAD });
    for (;;) {
      const message = ready.shift();
      if (!message) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if ('end' in message) return;
      if ('error' in message) {
        const { kind, message: text } = message.error;
        throw kind === 'file' ? new ImportFileError(text) : kind === 'header' ? new ImportHeaderError(text) : new Error(text);
      }
      worker.postMessage({ credit: 1 });
      yield message.batch;
    }
  } finally {
    worker.removeAllListeners('exit');
    await worker.terminate();
  }
}
