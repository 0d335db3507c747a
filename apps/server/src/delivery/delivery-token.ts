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
