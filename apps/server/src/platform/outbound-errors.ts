// What the outbound HTTP client (outbound-http.ts) says when it refuses or
// fails: one error type with a stable code and a message the user can be
// shown as it is, and the mapping of undici's, Node's and zlib's errors onto
// it (docs/security.md, "Outbound requests (SSRF)").

export type OutboundErrorCode =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'credentials_in_url'
  | 'forbidden_address'
  | 'dns_failed'
  | 'connect_failed'
  | 'tls_failed'
  | 'too_many_redirects'
  | 'bad_redirect'
  | 'too_large'
  | 'timeout'
  | 'bad_encoding'
  | 'protocol_error';

/** A refusal or failure whose `message` can be shown to the user as it is. */
export class OutboundError extends Error {
  constructor(
    public readonly code: OutboundErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

/** The first thing `pick` finds along an error's causes (and an AggregateError's errors). */
function findInChain<T>(error: unknown, pick: (e: unknown) => T | undefined): T | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth += 1) {
    const found = pick(current);
    if (found !== undefined) return found;
    if (current instanceof AggregateError) {
      for (const inner of current.errors) {
        const nested = findInChain(inner, pick);
        if (nested !== undefined) return nested;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The error a failed request reports: the caller's abort, the deadline, a refusal of ours, or what undici's error code means. */
export function toOutboundError(error: unknown, subject: string, signal: AbortSignal, timedOut: OutboundError, callerSignal?: AbortSignal): unknown {
  if (callerSignal?.aborted) return callerSignal.reason ?? error;
  if (signal.aborted && signal.reason === timedOut) return timedOut;
  const own = findInChain(error, (e) => (e instanceof OutboundError ? e : undefined));
  if (own) return own;
  const code = findInChain(error, (e) => {
    const c = (e as { code?: unknown }).code;
    return typeof c === 'string' ? c : undefined;
  });
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT') return timedOut;
  if (code && (code.includes('CERT') || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code === 'ECONNRESET_TLS')) {
    return new OutboundError('tls_failed', `${subject} server's HTTPS certificate could not be verified`, { cause: error });
  }
  if (code && (code.startsWith('Z_') || code.startsWith('ERR_BROTLI'))) {
    return new OutboundError('bad_encoding', `${subject} response could not be decompressed`, { cause: error });
  }
  if (code && (code.startsWith('HPE_') || code === 'UND_ERR_INFO' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH')) {
    return new OutboundError('protocol_error', `${subject} server sent an invalid HTTP response`, { cause: error });
  }
  return new OutboundError('connect_failed', `${subject} server could not be reached${code ? ` (${code})` : ''}`, { cause: error });
}
