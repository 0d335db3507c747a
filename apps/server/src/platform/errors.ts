// Errors a service throws to answer with a 4xx. Anything else is a bug and
// becomes a logged 500 with a generic message (see error-handler.ts).
export class HttpError extends Error {
  constructor(
    public readonly statusCode: number,
    message: string,
    public readonly code?: string,
    public readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, code?: string) => new HttpError(400, message, code);
export const unauthorized = (message = 'Authentication required') => new HttpError(401, message, 'unauthorized');
export const forbidden = (message: string) => new HttpError(403, message, 'forbidden');
/** Also used for "exists but belongs to someone else": never reveal another tenant's ids. */
export const notFound = (what = 'Resource') => new HttpError(404, `${what} not found`, 'not_found');
export const conflict = (message: string) => new HttpError(409, message, 'conflict');
/** Whole seconds to wait, at least 1, for a Retry-After header and the message that names it. */
export const retryAfterSeconds = (milliseconds: number) => Math.max(1, Math.ceil(milliseconds / 1000));
export const tooManyRequests = (message: string, waitSeconds: number) =>
  new HttpError(429, message, 'rate_limited', { 'retry-after': String(Math.max(1, Math.ceil(waitSeconds))) });
