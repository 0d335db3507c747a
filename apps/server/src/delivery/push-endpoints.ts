// Which subscription endpoints Herald will POST to (docs/security.md, "Outbound
// requests (SSRF)"): browsers hand Herald these URLs, so an attacker could subscribe
// with http://169.254.169.254/… and make the server send requests there.
// Endpoints must be https on a known push service, or on an origin the
// administrator lists (EXTRA_PUSH_ORIGINS, e.g. a test push service).
import crypto from 'node:crypto';
import { pushServiceOfHost } from './push-services';

export type PushEndpointCheck = { ok: true; origin: string } | { ok: false; reason: string };

/** A host of the push services docs/web-push.md lists (push-services.ts), exact or as a parent domain. */
function isKnownPushHost(hostname: string): boolean {
  return pushServiceOfHost(hostname) !== 'other';
}

/** Spaces, control characters and backslashes: WHATWG URL parsing drops them or turns them into `/`. */
function hasCharactersUrlParsersRewrite(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f || code === 0x5c || code === 0xa0) return true;
  }
  return false;
}

/**
 * Checks an endpoint against the policy. `extraOrigins` are exact origins
 * (scheme://host[:port]) an administrator allowed; they may be http.
 */
export function checkPushEndpoint(endpoint: string, extraOrigins: readonly string[] = []): PushEndpointCheck {
  // The endpoint is stored and POSTed to exactly as the browser gave it;
  // characters a URL parser would quietly strip or rewrite make it ambiguous.
  if (hasCharactersUrlParsersRewrite(endpoint)) return { ok: false, reason: 'The subscription endpoint must be a URL' };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { ok: false, reason: 'The subscription endpoint must be a URL' };
  }
  if (extraOrigins.includes(url.origin) && !url.username && !url.password) return { ok: true, origin: url.origin };
  if (url.protocol !== 'https:') return { ok: false, reason: 'The subscription endpoint must be an https:// URL' };
  if (url.username || url.password || url.port !== '' || !isKnownPushHost(url.hostname)) {
    return {
      ok: false,
      reason: `The subscription endpoint is not on a known push service (${url.host}); Herald accepts endpoints from Google FCM, Mozilla, Apple and Microsoft push services`,
    };
  }
  return { ok: true, origin: url.origin };
}

/** RFC 3986 §2.3: characters that mean the same percent-encoded or not. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** RFC 3986 §6.2.2.1–2: %7e and %7E are `~`; other escapes get upper-case hex. */
function normalisePercentEncoding(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(character) ? character : `%${hex.toUpperCase()}`;
  });
}

/**
 * The one spelling of an endpoint that Herald stores, hashes and looks up
 * (docs/security.md, "One device, one subscriber"): the WHATWG URL
 * serialisation (lower-case scheme and host, default port dropped, dot
 * segments resolved), without fragment or empty query, with RFC 3986
 * percent-encoding normalisation. Every spelling a push service treats as the
 * same URL becomes the same text, so one browser is one subscriber however
 * its endpoint is written. Idempotent. Text that is not a URL comes back
 * trimmed (lookups of it find nothing; subscribing refuses it first).
 */
export function normalisePushEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    return endpoint.trim();
  }
  url.hash = '';
  // Setting the path again resolves dot segments that decoding produced (%2E%2E → ..).
  url.pathname = normalisePercentEncoding(url.pathname);
  const query = normalisePercentEncoding(url.search);
  // `search` is '' for both "no query" and a bare "?"; assigning '' drops the "?".
  url.search = query === '?' ? '' : query;
  return url.href;
}

/** For PushClientOptions.allowOrigin: the same policy, by origin. */
export function pushOriginPolicy(extraOrigins: readonly string[] = []): (origin: string) => boolean {
  return (origin) => checkPushEndpoint(`${origin}/`, extraOrigins).ok;
}

/**
 * Chrome replaces the endpoint of a subscription it has revoked with one on
 * `permanently-removed.invalid`; `.invalid` can never resolve (RFC 6761 §6.4),
 * so such a subscriber is gone, not failing.
 */
export function isPermanentlyRemovedEndpoint(endpoint: string): boolean {
  try {
    const hostname = new URL(endpoint).hostname;
    return hostname === 'invalid' || hostname.endsWith('.invalid');
  } catch {
    return false;
  }
}

/**
 * The stored key of an endpoint (subscribers.endpoint_hash): endpoints are
 * long, the unique index stays small. Hashes the normalised endpoint, so
 * every lookup by endpoint (unsubscribe, previous_endpoint, track, identify,
 * tags) finds the one subscriber of a browser however the endpoint is spelt.
 */
export function endpointHash(endpoint: string): string {
  return crypto.createHash('sha256').update(normalisePushEndpoint(endpoint)).digest('hex');
}
