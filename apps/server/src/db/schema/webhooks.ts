// Webhooks: a site's endpoints, the outbox of events to deliver to them, every
// attempt (the delivery log) and the click tallies of the next batch.
import type { Counter, Millis } from './columns';

export interface WebhooksTable {
  id: string;
  site_id: string;
  url: string;
  /** JSON array of WebhookEventType. */
  events: string;
  /** `whsec_` + base64 of 24 random bytes; it signs every delivery, so it is kept as it is. */
  secret: string;
  /** When the next notification.clicked batch may go; null: at the next tick. */
  clicks_next_at: Millis | null;
  created_at: Millis;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  /** `msg_…`: the webhook-id header, stable across retries. */
  id: string;
  webhook_id: string;
  event_type: string;
  /** The JSON body, fixed when the event happened: every attempt sends the same bytes. */
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: Counter;
  /** Due at (pending), or the claim's lease while an attempt runs; null once delivered or given up. */
  next_attempt_at: Millis | null;
  created_at: Millis;
  finished_at: Millis | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  webhook_id: string;
  attempt: number;
  attempted_at: Millis;
  status_code: number | null;
  error: string | null;
}

export interface WebhookClickTalliesTable {
  webhook_id: string;
  notification_id: string;
  clicks: number;
}
