import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { isDatabaseUnavailable } from '../db/database';
import { HttpError } from './errors';

/** Turns a zod issue path + message into one readable sentence. */
function describeIssue(issue: { instancePath?: string; message?: string }): string {
  const field = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const message = issue.message ?? 'is invalid';
  return field ? `${field}: ${message}` : message;
}

/** Retry-After of a 503 while the database is unreachable: a PostgreSQL restart takes a few seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Every error leaves as `{ success: false, error: { message } }` (spec §8). */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | HttpError | Error, request, reply) => {
    if (error instanceof HttpError) {
      void reply
        .status(error.statusCode)
        .headers(error.headers)
        .send({ success: false, error: { message: error.message, ...(error.code ? { code: error.code } : {}) } });
      return;
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const message = error.validation.map(describeIssue).join('; ');
      void reply.status(400).send({ success: false, error: { message, code: 'invalid_request' } });
      return;
    }
    if (isResponseSerializationError(error)) {
      request.log.error({ err: error, cause: error.cause }, 'response did not match its schema');
      void reply.status(500).send({ success: false, error: { message: 'Internal server error' } });
      return;
    }
    const statusCode = (error as FastifyError).statusCode;
    if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
      // Fastify's own client errors: malformed JSON, body too large, wrong content type.
      const message =
        statusCode === 413
          ? 'Request body is too large'
          : statusCode === 415
            ? 'Unsupported content type: send application/json'
            : error.message;
      void reply.status(statusCode).send({ success: false, error: { message, code: (error as FastifyError).code } });
      return;
    }
    if (isDatabaseUnavailable(error)) {
      // The database is restarting or out of reach: a client should come back shortly, not report a bug.
      request.log.warn({ err: error }, 'database unavailable');
      void reply
        .status(503)
        .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
        .send({ success: false, error: { message: 'The database is unavailable right now. Please try again in a few seconds.', code: 'database_unavailable' } });
      return;
    }
    request.log.error({ err: error }, 'unhandled error');
    void reply.status(500).send({ success: false, error: { message: 'Internal server error' } });
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ success: false, error: { message: `Route ${request.method} ${request.url.split('?')[0]} not found`, code: 'not_found' } });
  });
}

/**
 * Fastify's `frameworkErrors` option: the router refuses some addresses
 * before any route or error handler runs (a malformed %-escape, a path
 * parameter over maxParamLength) and would answer with its own body shape.
 * These answers keep the spec §8 envelope like every other error.
 */
export function sendFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The address is not valid (malformed %-encoding)'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'An id in the address is too long'
        : 'The address could not be read';
  void reply.status(statusCode).send({ success: false, error: { message, code: error.code } });
}
