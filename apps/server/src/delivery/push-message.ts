// A message for one subscriber, as the delivery engine hands it to the
// PushClient, and the checks it must pass before any work is done on it.
import type { EncodedSubscriberKeys, SubscriberKeys } from './encryption';
import { isPermanentlyRemovedEndpoint } from './push-endpoints';
import type { PushOutcome } from './push-outcome';
import { isValidTopic } from './topic';
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
  /** The VAPID key pair the subscription was made with, and the subject; pass the same object for every message of one key. */
  vapid: VapidCredentials;
  /** Seconds the push service may keep the message for an offline browser (RFC 8030 §5.2). */
  ttl: number;
  urgency?: Urgency;
  /** Collapse key (topic.ts): a queued message with the same topic is replaced. */
  topic?: string;
}

/**
 * Whether a message may be sent at all, and its endpoint's URL if so: an
 * endpoint that is not a URL or not http(s) is an invalid subscription, one on
 * `.invalid` a revoked one (gone, docs/web-push.md), an origin `allowOrigin`
 * refuses is not a push service (docs/security.md, "Outbound requests (SSRF)"),
 * and RFC 8030 refuses a TTL that is not whole seconds and an ill-formed Topic.
 */
export function checkPushMessage(message: PushMessage<unknown>, allowOrigin: ((origin: string) => boolean) | undefined): { ok: true; url: URL } | { ok: false; outcome: PushOutcome } {
  let url: URL;
  try {
    url = new URL(message.endpoint);
  } catch {
    return { ok: false, outcome: { kind: 'failed', reason: 'The subscription endpoint is not a URL', code: 'invalid_subscription' } };
  }
  if (isPermanentlyRemovedEndpoint(message.endpoint)) {
    return { ok: false, outcome: { kind: 'gone', status: 410, reason: 'The browser revoked this subscription (its endpoint is on .invalid)' } };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, outcome: { kind: 'failed', reason: 'The subscription endpoint must be an https URL', code: 'invalid_subscription' } };
  }
  if (allowOrigin && !allowOrigin(url.origin)) {
    return { ok: false, outcome: { kind: 'failed', reason: `${url.origin} is not a known push service`, code: 'rejected' } };
  }
  if (!Number.isInteger(message.ttl) || message.ttl < 0) {
    return { ok: false, outcome: { kind: 'failed', reason: 'TTL must be a whole number of seconds', code: 'rejected' } };
  }
  if (message.topic !== undefined && !isValidTopic(message.topic)) {
    return { ok: false, outcome: { kind: 'failed', reason: 'Topic must be 1 to 32 letters or digits', code: 'rejected' } };
  }
  return { ok: true, url };
}
