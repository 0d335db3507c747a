import { z } from 'zod';
import { envelope, httpUrl } from './common';

// Webhooks (docs/product.md, "Webhooks"): a site's own endpoints that Herald
// POSTs events to, signed as the Standard Webhooks specification says
// (https://www.standardwebhooks.com): headers webhook-id, webhook-timestamp
// and webhook-signature `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.

export const WEBHOOK_EVENT_TYPES = ['subscriber.created', 'subscriber.removed', 'notification.completed', 'notification.failed', 'notification.clicked'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** Sent by "Send test event" whatever the webhook subscribed to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** What the dashboard says each event is. */
export const WEBHOOK_EVENT_LABELS: Record<WebhookEventType, string> = {
  'subscriber.created': 'A visitor subscribed',
  'subscriber.removed': 'A subscriber was removed (unsubscribed, gone at the push service, or removed)',
  'notification.completed': 'A send completed, with its outcome counts',
  'notification.failed': 'A send failed (no push accepted)',
  'notification.clicked': 'Clicks, batched: at most one delivery a minute',
};

/** Why a subscriber.removed event fired. */
export const SUBSCRIBER_REMOVED_CAUSES = ['unsubscribed', 'gone', 'removed'] as const;
export type SubscriberRemovedCause = (typeof SUBSCRIBER_REMOVED_CAUSES)[number];

/** Every secret starts with this; what follows is the base64 of the key's bytes (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const WEBHOOKS_PER_SITE_MAX = 10;
/** Retries with exponential backoff stop this long after the event. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** notification.clicked: at most one delivery per webhook per this period. */
export const WEBHOOK_CLICK_BATCH_MS = 60_000;

export const createWebhookBody = z.object({
  // Herald's outbound client sends no credentials in the address (it would refuse every attempt), and they would be
  // listed and logged with the webhook: a receiver checks the signature instead.
  url: httpUrl.refine((url) => {
    try {
      const parsed = new URL(url);
      return parsed.username === '' && parsed.password === '';
    } catch {
      return true; // httpUrl says what is wrong with it
    }
  }, 'The webhook address must not contain a user name or password: Herald signs each delivery, check the signature instead'),
  events: z
    .array(z.enum(WEBHOOK_EVENT_TYPES, { message: 'Unknown event type' }))
    .min(1, 'Choose at least one event')
    .transform((events) => WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type))),
});
export type CreateWebhookBody = z.input<typeof createWebhookBody>;

/** A webhook as listed: never its secret. */
export const webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  created_at: z.string(),
});
export type Webhook = z.infer<typeof webhook>;

/** `secret` is in this answer only (shown once); it signs every delivery. */
export const createWebhookResponse = envelope(z.object({ webhook: webhook.extend({ secret: z.string() }) }));
export type CreatedWebhook = z.infer<typeof createWebhookResponse>['data']['webhook'];

export const webhooksResponse = envelope(z.object({ webhooks: z.array(webhook) }));
export const deleteWebhookResponse = envelope(z.object({ deleted: z.literal(true) }));

/** One attempt to deliver one event: the delivery log. */
export const webhookAttempt = z.object({
  id: z.string(),
  /** The webhook-id header: the same for every attempt of one event (receivers dedupe on it). */
  message_id: z.string(),
  event_type: z.string(),
  attempt: z.number().int(),
  attempted_at: z.string(),
  /** The receiver's HTTP status; null when no answer came (refused address, network error, timeout). */
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  /** The event's state after this attempt: delivered, retrying (next_attempt_at) or failed (gave up). */
  delivery_status: z.enum(['pending', 'delivered', 'failed']),
  next_attempt_at: z.string().nullable(),
});
export type WebhookAttempt = z.infer<typeof webhookAttempt>;

export const webhookDeliveriesQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) });
export const webhookDeliveriesResponse = envelope(z.object({ deliveries: z.array(webhookAttempt) }));
export const testWebhookResponse = envelope(z.object({ delivery: webhookAttempt }));
