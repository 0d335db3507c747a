import crypto from 'node:crypto';
import { hmac, safeEqual } from '../platform/secrets';

// The token a push payload carries so the service worker can report
// "delivered" and "clicked" (docs/security.md: beacons carry a token signed by
// the server for (notification, subscriber)). A delivery row is exactly one
// (run, subscriber) pair, so the token names the delivery id and signs it.
const PURPOSE = 'herald-delivery-beacon-v1';
const SIGNATURE_BYTES = 16;

export function createDeliveryToken(secret: Buffer, deliveryId: number): string {
  const id = String(deliveryId);
  return `${id}.${hmac(secret, PURPOSE, id).subarray(0, SIGNATURE_BYTES).toString('base64url')}`;
}

/** The delivery id if the token is genuine, otherwise undefined. */
export function readDeliveryToken(secret: Buffer, token: string): number | undefined {
  const match = /^([1-9][0-9]{0,15})\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (!match) return undefined;
  const [, id, signature] = match as unknown as [string, string, string];
  const expected = hmac(secret, PURPOSE, id).subarray(0, SIGNATURE_BYTES);
  if (!safeEqual(Buffer.from(signature, 'base64url'), expected)) return undefined;
  const deliveryId = Number(id);
  return Number.isSafeInteger(deliveryId) ? deliveryId : undefined;
}

// A test push (issue 12: "Send test" to the owner's test devices) carries the
// same payload with a token of its own kind: signed, so the beacon endpoint
// tells it from garbage and answers 200, but naming no delivery, so it counts
// nowhere (no notification counters, no hourly rollup, no performance).
const TEST_PURPOSE = 'herald-test-push-beacon-v1';

export function createTestPushToken(secret: Buffer): string {
  const nonce = crypto.randomBytes(9).toString('base64url');
  return `t.${nonce}.${hmac(secret, TEST_PURPOSE, nonce).subarray(0, SIGNATURE_BYTES).toString('base64url')}`;
}

/** True for a genuine test-push token. */
export function isTestPushToken(secret: Buffer, token: string): boolean {
  const match = /^t\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (!match) return false;
  return safeEqual(Buffer.from(match[2]!, 'base64url'), hmac(secret, TEST_PURPOSE, match[1]!).subarray(0, SIGNATURE_BYTES));
}
