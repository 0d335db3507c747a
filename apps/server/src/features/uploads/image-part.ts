import type { MultipartFile } from '@fastify/multipart';
import { UPLOAD_FIELD_NAME, UPLOAD_MAX_BYTES } from '@herald/contracts';
import type { FastifyRequest } from 'fastify';
import { badRequest, HttpError } from '../../platform/errors';
import { fileTooLarge } from './service';

/** Limits handed to the multipart parser: one file of at most 5 MB and a few small fields. */
export const MULTIPART_LIMITS = {
  fileSize: UPLOAD_MAX_BYTES,
  files: 1,
  fields: 10,
  fieldSize: 1024,
  parts: 20,
  headerPairs: 50,
} as const;

const NOT_MULTIPART = `Send the image as multipart/form-data in the field "${UPLOAD_FIELD_NAME}"`;

/**
 * Reads the `image` part of a multipart request into memory, never more
 * than 5 MB: the parser stops storing at the limit and marks the part
 * truncated (the rest of the request is read and dropped, not buffered), and
 * that answers 413 with the spec's message.
 */
export async function readImagePart(request: FastifyRequest): Promise<Buffer> {
  if (!request.isMultipart()) throw badRequest(NOT_MULTIPART, 'invalid_request');
  let part: MultipartFile | undefined;
  try {
    part = await request.file({ limits: MULTIPART_LIMITS, throwFileSizeLimit: false });
  } catch (error) {
    throw asClientError(error);
  }
  if (!part) throw badRequest(`No image received: ${NOT_MULTIPART.charAt(0).toLowerCase()}${NOT_MULTIPART.slice(1)}`, 'invalid_request');
  if (part.fieldname !== UPLOAD_FIELD_NAME) {
    part.file.resume();
    throw badRequest(NOT_MULTIPART, 'invalid_request');
  }

  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of part.file) {
      size += (chunk as Buffer).length;
      if (size <= UPLOAD_MAX_BYTES) chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw asClientError(error);
  }
  if (part.file.truncated || size > UPLOAD_MAX_BYTES) throw fileTooLarge();
  return Buffer.concat(chunks, size);
}

/** Malformed multipart bodies (no boundary, cut short, too many parts) are the client's error, not a 500. */
function asClientError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  if (statusCode === 413) return new HttpError(413, 'Send one image of at most 5MB per request', 'too_many_parts');
  const detail = error instanceof Error ? error.message : 'unreadable body';
  return badRequest(`Malformed multipart body (${detail})`, 'invalid_request');
}
