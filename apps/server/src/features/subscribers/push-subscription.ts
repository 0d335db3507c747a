import crypto from 'node:crypto';
import type { PushSubscriptionInput } from '@herald/contracts';
import { badRequest } from '../../platform/errors';

/**
 * Hosts of the push services browsers hand out endpoints for (web-push guide,
 * "How the big push services behave"). Herald POSTs to whatever endpoint a
 * subscriber sends, so anything else would make the public subscribe API an
 * SSRF door (security guide, "Outbound requests").
 */
const PUSH_SERVICE_HOSTS = new Set([
  'fcm.googleapis.com', // Chrome, Edge on Android, Opera, Samsung Internet
  'android.googleapis.com', // legacy GCM endpoints still held by old Chrome subscriptions
  'updates.push.services.mozilla.com', // Firefox
  'web.push.apple.com', // Safari 16+, iOS 16.4+ home-screen apps
]);
const PUSH_SERVICE_HOST_SUFFIXES = [
  '.push.services.mozilla.com', // Mozilla autopush regional hosts
  '.notify.windows.com', // Microsoft WNS (Edge on Windows)
];

function isKnownPushServiceHost(hostname: string): boolean {
  return PUSH_SERVICE_HOSTS.has(hostname) || PUSH_SERVICE_HOST_SUFFIXES.some((suffix) => hostname.endsWith(suffix) && hostname.length > suffix.length);
}

/** Spaces, control characters and backslashes (WHATWG URL parsing drops or turns them into `/`). */
function hasCharactersUrlParsersRewrite(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f || code === 0x5c || code === 0xa0) return true;
  }
  return false;
}

/**
 * Accepts an https endpoint on a known push service (default port, no user
 * name or password in it), or one whose origin an administrator listed in
 * EXTRA_PUSH_ORIGINS (exact origin match; tests admit their local push
 * service this way).
 */
export function checkPushEndpoint(endpoint: string, extraPushOrigins: readonly string[]): string {
  // The endpoint is stored and later POSTed to exactly as the browser gave it;
  // characters a URL parser would quietly strip or rewrite make it ambiguous.
  if (hasCharactersUrlParsersRewrite(endpoint)) throw badRequest('subscription.endpoint must be a URL', 'invalid_subscription');
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw badRequest('subscription.endpoint must be a URL', 'invalid_subscription');
  }
  if (extraPushOrigins.includes(url.origin) && !url.username && !url.password) return endpoint;
  if (url.protocol !== 'https:') throw badRequest('subscription.endpoint must be an https:// URL', 'invalid_subscription');
  if (url.username || url.password || url.port !== '' || !isKnownPushServiceHost(url.hostname)) {
    throw badRequest(
      `subscription.endpoint is not on a known push service (${url.host}); Herald accepts endpoints from Google FCM, Mozilla, Apple and Microsoft push services`,
      'invalid_subscription',
    );
  }
  return endpoint;
}

/**
 * Decodes base64url (RFC 4648 §5) as browsers produce it. Standard base64
 * and `=` padding are accepted too (older SDKs send them); any other
 * character is an error rather than silently skipped, as Buffer.from would.
 */
function decodeBase64Url(value: string, field: string): Buffer {
  const trimmed = value.trim().replace(/=+$/, '');
  if (!/^[A-Za-z0-9_+/-]*$/.test(trimmed) || trimmed.length % 4 === 1) {
    throw badRequest(`${field} must be base64url-encoded`, 'invalid_subscription');
  }
  return Buffer.from(trimmed.replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
}

const P256_UNCOMPRESSED_POINT_BYTES = 65;
const AUTH_SECRET_BYTES = 16;

/**
 * RFC 8291 §3: p256dh is the subscriber's uncompressed P-256 public key
 * (0x04 | X | Y). Importing it as a JWK makes OpenSSL check that (X, Y) is
 * on the curve; a key that is not would fail every encryption later.
 */
function assertPointOnP256(point: Buffer): void {
  try {
    crypto.createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
      format: 'jwk',
    });
  } catch {
    throw badRequest('subscription.keys.p256dh is not a point on the P-256 curve', 'invalid_subscription');
  }
}

export interface CheckedSubscription {
  endpoint: string;
  /** base64url without padding, as stored. */
  p256dh: string;
  auth: string;
}

/** Validates a browser's PushSubscription: endpoint host, p256dh on the curve, auth 16 bytes (RFC 8291, web-push guide). */
export function checkPushSubscription(subscription: PushSubscriptionInput, extraPushOrigins: readonly string[]): CheckedSubscription {
  const endpoint = checkPushEndpoint(subscription.endpoint, extraPushOrigins);

  const p256dh = decodeBase64Url(subscription.keys.p256dh, 'subscription.keys.p256dh');
  if (p256dh.length !== P256_UNCOMPRESSED_POINT_BYTES || p256dh[0] !== 0x04) {
    throw badRequest(
      `subscription.keys.p256dh must be a 65-byte uncompressed P-256 public key (got ${p256dh.length} bytes${p256dh.length === P256_UNCOMPRESSED_POINT_BYTES ? ' not starting with 0x04' : ''})`,
      'invalid_subscription',
    );
  }
  assertPointOnP256(p256dh);

  const auth = decodeBase64Url(subscription.keys.auth, 'subscription.keys.auth');
  if (auth.length !== AUTH_SECRET_BYTES) {
    throw badRequest(`subscription.keys.auth must be 16 bytes (got ${auth.length})`, 'invalid_subscription');
  }

  return { endpoint, p256dh: p256dh.toString('base64url'), auth: auth.toString('base64url') };
}

/** The stored key of an endpoint (subscribers.endpoint_hash): endpoints are long, the unique index stays small. */
export function endpointHash(endpoint: string): string {
  return crypto.createHash('sha256').update(endpoint).digest('hex');
}
