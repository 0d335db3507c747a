// A message for one subscriber, as the delivery engine hands it to the PushClient.
import type { EncodedSubscriberKeys, SubscriberKeys } from './encryption';
import type { VapidCredentials } from './vapid';

/** RFC 8030 §5.3. */
export type Urgency = 'very-low' | 'low' | 'normal' | 'high';

/** FCM keeps a message at most 28 days; longer TTLs are shortened to this. */
export const MAX_TTL_SECONDS = 28 * 24 * 60 * 60;

export interface PushMessage<Ref = unknown> {
  /** Handed back untouched with the outcome (a delivery row id, say). */
  ref: Ref;
  /** The subscription's endpoint URL. */
  endpoint: string;
  /** The subscription's keys, base64url as the browser gave them, or decoded. */
  keys: EncodedSubscriberKeys | SubscriberKeys;
  /** Plaintext to encrypt: the service worker's JSON (payload.ts), at most 3993 bytes. */
  payload: Uint8Array;
  /** The site's VAPID key pair and subject; pass the same object for a whole fan-out. */
  vapid: VapidCredentials;
  /** Seconds the push service may keep the message for an offline browser (RFC 8030 §5.2). */
  ttl: number;
  urgency?: Urgency;
  /** Collapse key (topic.ts): a queued message with the same topic is replaced. */
  topic?: string;
}
