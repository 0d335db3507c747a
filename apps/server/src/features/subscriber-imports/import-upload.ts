// The multipart upload of an import file (docs/product.md, "Importing
// subscribers"): the `file` part is streamed straight to DATA_DIR/imports
// under a random name, never held in memory, and cut off at the size limit
// (413); the small form fields may come before or after it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { badRequest, HttpError } from '../../platform/errors';

export const IMPORT_FILE_FIELD = 'file';
export const NO_FILE = 'Choose a CSV or JSON Lines file to import (multipart/form-data, field "file")';

export interface ImportUpload {
  /** The file's name in the imports folder. */
  storedFile: string;
  /** The name the browser gave it (display only). */
  fileName: string;
  size: number;
  /** The first bytes, to tell CSV from JSON Lines. */
  head: Buffer;
  fields: Record<string, string>;
}

export type ReadImportUpload = (folder: string, maxBytes: number) => Promise<ImportUpload>;

/** What a limit of so many bytes reads as: "1 GB", "10 MB", "2000 bytes". */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 ** 3 && bytes % 1024 ** 3 === 0) return `${bytes / 1024 ** 3} GB`;
  if (bytes >= 1024 ** 2 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2} MB`;
  return `${bytes} bytes`;
}

/** Reads the request's parts; the file goes to `folder`. The caller deletes the stored file if it refuses the import. */
export function importUploadReader(request: FastifyRequest): ReadImportUpload {
  return async (folder, maxBytes) => {
    if (!request.isMultipart()) throw badRequest(NO_FILE, 'invalid_request');
    const fields: Record<string, string> = {};
    let upload: ImportUpload | undefined;
    let stored: string | undefined;
    try {
      for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 1024, parts: 12 } })) {
        if (part.type === 'field') {
          fields[part.fieldname] = String(part.value);
          continue;
        }
        if (part.fieldname !== IMPORT_FILE_FIELD || upload) {
          part.file.resume();
          continue;
        }
        await fs.promises.mkdir(folder, { recursive: true });
        const storedFile = `${crypto.randomUUID()}.upload`;
        stored = path.join(folder, storedFile);
        const headChunks: Buffer[] = [];
        let size = 0;
        // Counted on the way through, with the disk's back-pressure: nothing piles up in memory.
        const counter = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            if (size < 4096) headChunks.push(chunk.subarray(0, 4096 - size));
            size += chunk.length;
            done(null, chunk);
          },
        });
        await pipeline(part.file, counter, fs.createWriteStream(stored, { flags: 'wx', mode: 0o600 }));
        if (part.file.truncated) throw new HttpError(413, `The file is larger than ${sizeLabel(maxBytes)}, the most one import reads: split it into smaller files`, 'file_too_large');
        upload = { storedFile, fileName: (part.filename || 'import').slice(0, 200), size, head: Buffer.concat(headChunks), fields };
      }
    } catch (error) {
      if (stored) await fs.promises.rm(stored, { force: true });
      throw asClientError(error);
    }
    if (!upload || upload.size === 0) {
      if (stored) await fs.promises.rm(stored, { force: true });
      throw badRequest(upload ? 'The file is empty: choose a CSV or JSON Lines file with a header row and subscriptions' : NO_FILE, 'invalid_request');
    }
    return upload;
  };
}

/** Malformed multipart bodies (cut short, too many parts) are the client's error, not a 500. */
function asClientError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  if (statusCode === 413) return new HttpError(413, 'Send one file and the form fields vapid_key_id and enrol_in_welcome_campaign', 'too_many_parts');
  const detail = error instanceof Error ? error.message : 'unreadable body';
  return badRequest(`Malformed multipart body (${detail})`, 'invalid_request');
}
