import type { PushSubscriptionInput } from '@herald/contracts';
import { checkPushEndpoint as checkEndpointPolicy, normalisePushEndpoint } from '../../delivery/push-endpoints';
import { badRequest } from '../../platform/errors';

/**
 * Herald POSTs to whatever endpoint a subscriber sends, so only push services
 * (or origins an administrator listed in EXTRA_PUSH_ORIGINS) are accepted:
 * anything else would make the public subscribe API an SSRF door (docs/security.md,
 * "Outbound requests"). The policy is the push client's own.
 */
export function checkPushEndpoint(endpoint: string, extraPushOrigins: readonly string[]): string {
  const check = checkEndpointPolicy(endpoint, extraPushOrigins);
  if (!check.ok) throw badRequest(check.reason.replace(/^The subscription endpoint/, 'subscription.endpoint'), 'invalid_subscription');
  return normalisePushEndpoint(endpoint);
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

/** P-256 (SEC 2 §2.4.2, FIPS 186-4 D.1.2.3): y² = x³ − 3x + b over the prime field p. */
const P256_P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const P256_B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

/**
 * RFC 8291 §3: p256dh is the subscriber's uncompressed P-256 public key
 * (0x04 | X | Y). The point must be on the curve (both coordinates below p,
 * y² = x³ − 3x + b mod p; the cofactor is 1, so every such point is in the
 * group), as OpenSSL checks when it imports the key: a key that is not would
 * fail every encryption later. Checked with BigInt arithmetic, a few
 * microseconds, so an import of a million rows is not bound by key imports.
 */
function assertPointOnP256(point: Buffer): void {
  const x = BigInt(`0x${point.toString('hex', 1, 33)}`);
  const y = BigInt(`0x${point.toString('hex', 33, 65)}`);
  const mod = (n: bigint) => ((n % P256_P) + P256_P) % P256_P;
  const onCurve = x < P256_P && y < P256_P && mod(y * y) === mod(x * x * x - 3n * x + P256_B);
  if (!onCurve) throw badRequest('subscription.keys.p256dh is not a point on the P-256 curve', 'invalid_subscription');
}

export interface CheckedSubscription {
  endpoint: string;
  /** base64url without padding, as stored. */
  p256dh: string;
  auth: string;
}

/**
 * Validates a browser's PushSubscription: endpoint host, p256dh on the curve,
 * auth 16 bytes (RFC 8291, docs/web-push.md). The endpoint comes back
 * normalised (normalisePushEndpoint), as it is stored.
 */
export function checkPushSubscription(subscription: PushSubscriptionInput, extraPushOrigins: readonly string[]): CheckedSubscription {
  const endpoint = checkPushEndpoint(subscription.endpoint, extraPushOrigins);
  return { endpoint, ...checkPushKeys(subscription.keys) };
}

/** The keys of a PushSubscription (RFC 8291): p256dh a point on P-256, auth 16 bytes; base64url without padding, as stored. */
export function checkPushKeys(keys: PushSubscriptionInput['keys']): Omit<CheckedSubscription, 'endpoint'> {
  const p256dh = decodeBase64Url(keys.p256dh, 'subscription.keys.p256dh');
  if (p256dh.length !== P256_UNCOMPRESSED_POINT_BYTES || p256dh[0] !== 0x04) {
    throw badRequest(
      `subscription.keys.p256dh must be a 65-byte uncompressed P-256 public key (got ${p256dh.length} bytes${p256dh.length === P256_UNCOMPRESSED_POINT_BYTES ? ' not starting with 0x04' : ''})`,
      'invalid_subscription',
    );
  }
  assertPointOnP256(p256dh);

  const auth = decodeBase64Url(keys.auth, 'subscription.keys.auth');
  if (auth.length !== AUTH_SECRET_BYTES) {
    throw badRequest(`subscription.keys.auth must be 16 bytes (got ${auth.length})`, 'invalid_subscription');
  }

  return { p256dh: p256dh.toString('base64url'), auth: auth.toString('base64url') };
}

// The descriptive fields a subscription carries (the public subscribe API's
// and an import's): never a reason to refuse one, only stored when they parse.
// Asking Intl is slow and a site sees few distinct values: answers are cached
// (bounded).
const languageCache = new Map<string, string | null>();
const timezoneCache = new Map<string, string | null>();
function cached(cache: Map<string, string | null>, key: string, compute: () => string | null): string | null {
  let value = cache.get(key);
  if (value === undefined) {
    value = compute();
    if (cache.size < 10_000) cache.set(key, value);
  }
  return value;
}

/** An IANA zone the runtime knows, else null. */
export function knownTimezone(value: string | null | undefined): string | null {
  const zone = value?.trim();
  if (!zone || zone.length > 64) return null;
  return cached(timezoneCache, zone, () => {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    } catch {
      return null;
    }
  });
}

/** A well-formed BCP 47 language tag (e.g. `en-US`), canonicalised, else null. */
export function languageTag(value: string | null | undefined): string | null {
  const tag = value?.trim();
  if (!tag || tag.length > 35) return null;
  return cached(languageCache, tag, () => {
    try {
      return Intl.getCanonicalLocales(tag)[0] ?? null;
    } catch {
      return null;
    }
  });
}
