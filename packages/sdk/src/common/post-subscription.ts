import { encodeBase64Url } from './base64url';
import { siteEndpoint, type HeraldConfig } from './config';
import { HeraldError } from './errors';
import { postJson } from './http';
import { writeSubscriber, type SubscriberRecord } from './store';

/** Body of POST /api/public/sites/{siteId}/subscribers. */
export interface SubscribeBody {
  subscription: PushSubscriptionJSON;
  timezone?: string;
  language?: string;
  previous_endpoint?: string;
  /** The opt-in prompt the visitor accepted; Herald counts it in that prompt's conversion. */
  prompt?: string;
  /** The applicationServerKey the subscription was made with (base64url): Herald signs its pushes with that key. */
  vapid_public_key?: string;
}

function browserTimezone(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sends a subscription to Herald and remembers what Herald accepted. Used by the
 * page (subscribe, page-load refresh) and by the worker (pushsubscriptionchange);
 * `previousEndpoint` lets Herald replace the old row instead of counting a new
 * subscriber.
 */
export async function postSubscription(
  config: HeraldConfig,
  subscription: PushSubscription,
  previousEndpoint?: string,
  prompt?: string,
): Promise<SubscriberRecord> {
  const body: SubscribeBody = { subscription: subscription.toJSON() };
  const timezone = browserTimezone();
  if (timezone) body.timezone = timezone;
  if (navigator.language) body.language = navigator.language;
  if (previousEndpoint && previousEndpoint !== subscription.endpoint) body.previous_endpoint = previousEndpoint;
  if (prompt) body.prompt = prompt;
  const key = (subscription.options as PushSubscriptionOptions | undefined)?.applicationServerKey;
  if (key) body.vapid_public_key = encodeBase64Url(key);

  const data = (await postJson(siteEndpoint(config, 'subscribers'), body)) as { subscriber?: { id?: unknown } } | undefined;
  const subscriberId = data?.subscriber?.id;
  if (typeof subscriberId !== 'string') throw new HeraldError('api-error', 'Herald did not return a subscriber id');

  const record: SubscriberRecord = {
    siteId: config.siteId,
    endpoint: subscription.endpoint,
    subscriberId,
    postedAt: Date.now(),
  };
  await writeSubscriber(record);
  return record;
}

/** Whether a subscription was made with this VAPID key; a browser that does not expose the key gets the benefit of the doubt. */
export function subscribedWithKey(subscription: PushSubscription, key: Uint8Array): boolean {
  const options = subscription.options as PushSubscriptionOptions | undefined;
  if (!options) return true;
  return options.applicationServerKey !== null && sameBytesOf(options.applicationServerKey, key);
}

function sameBytesOf(buffer: ArrayBuffer, key: Uint8Array): boolean {
  const bytes = new Uint8Array(buffer);
  return bytes.length === key.length && bytes.every((byte, index) => byte === key[index]);
}
