// The one way a notification row comes into being, whoever creates it: the
// dashboard (create, duplicate), an RSS feed item, a welcome campaign step.
// Counters start at zero and the JSON columns are encoded here, so no caller
// builds a row by hand.
import crypto from 'node:crypto';
import { NOTIFICATION_TTL_DEFAULT_SECONDS, type ActionButton, type NotificationSource, type NotificationStatus, type NotificationType, type NotificationUrgency, type DeliveryMode } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { Database, NotificationRow } from '../../db/schema';
import { insertNotification } from './repository';

type Db = Kysely<Database> | Transaction<Database>;

/** What a notification shows (spec §3 Notification). */
export interface NotificationContent {
  title: string;
  message: string;
  destination_url: string;
  icon_url: string | null;
  image_url: string | null;
  /** Up to two action buttons (spec §3); none is stored as null. */
  actions: readonly ActionButton[];
}

/** How push services handle it (docs/web-push.md, "TTL, Urgency and Topic"). */
export interface DeliveryOptions {
  ttl_seconds: number;
  urgency: NotificationUrgency;
  topic: string | null;
  require_interaction: boolean;
  /** Sent even to subscribers at the site's frequency cap. */
  frequency_cap_exempt: boolean;
  /** At most this many pushes a minute (docs/delivery.md, "Throttled sends"); null: no throttle. */
  throttle_per_minute: number | null;
  /** At once, or at a time of day in each subscriber's zone (docs/delivery.md, "Local-time delivery"). */
  delivery_mode: DeliveryMode;
  local_time: string | null;
  /** "Send anyway": sent even inside the site's quiet hours. */
  quiet_hours_exempt: boolean;
}

/** What every send had before the options existed, and what a new notification gets unless it says otherwise. */
export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  ttl_seconds: NOTIFICATION_TTL_DEFAULT_SECONDS,
  urgency: 'normal',
  topic: null,
  require_interaction: false,
  frequency_cap_exempt: false,
  throttle_per_minute: null,
  delivery_mode: 'at_once',
  local_time: null,
  quiet_hours_exempt: false,
};

/** The stored options of a notification (to copy them). */
export function deliveryOptionsOf(
  row: Pick<NotificationRow, 'ttl_seconds' | 'urgency' | 'topic' | 'require_interaction' | 'frequency_cap_exempt' | 'throttle_per_minute' | 'delivery_mode' | 'local_time' | 'quiet_hours_exempt'>,
): DeliveryOptions {
  return {
    ttl_seconds: row.ttl_seconds,
    urgency: row.urgency,
    topic: row.topic,
    require_interaction: row.require_interaction === 1,
    frequency_cap_exempt: row.frequency_cap_exempt === 1,
    throttle_per_minute: row.throttle_per_minute,
    delivery_mode: row.delivery_mode,
    local_time: row.local_time,
    quiet_hours_exempt: row.quiet_hours_exempt === 1,
  };
}

export interface NewNotification {
  siteId: string;
  type: NotificationType;
  source: NotificationSource;
  content: NotificationContent;
  segmentId: string | null;
  status: NotificationStatus;
  /** Unset: DEFAULT_DELIVERY_OPTIONS. */
  delivery?: Partial<DeliveryOptions>;
  scheduledAt?: number | null;
  /** When its send began, for a notification created already sending (an RSS item). */
  sentAt?: number | null;
  /** A caller that must know the id before the row exists (to reference it in the same transaction) passes it. */
  id?: string;
}

/** The full row of a new notification, not yet stored. */
function newNotificationRow(fields: NewNotification, now: number): NotificationRow {
  const { content } = fields;
  const delivery = { ...DEFAULT_DELIVERY_OPTIONS, ...fields.delivery };
  return {
    id: fields.id ?? crypto.randomUUID(),
    site_id: fields.siteId,
    type: fields.type,
    source: fields.source,
    title: content.title,
    message: content.message,
    destination_url: content.destination_url,
    icon_url: content.icon_url,
    image_url: content.image_url,
    actions: content.actions.length ? JSON.stringify(content.actions) : null,
    ttl_seconds: delivery.ttl_seconds,
    urgency: delivery.urgency,
    topic: delivery.topic,
    require_interaction: delivery.require_interaction ? 1 : 0,
    frequency_cap_exempt: delivery.frequency_cap_exempt ? 1 : 0,
    throttle_per_minute: delivery.throttle_per_minute,
    delivery_mode: delivery.delivery_mode,
    local_time: delivery.local_time,
    quiet_hours_exempt: delivery.quiet_hours_exempt ? 1 : 0,
    quiet_hours_deferred_count: 0,
    segment_id: fields.segmentId,
    status: fields.status,
    scheduled_at: fields.scheduledAt ?? null,
    sent_at: fields.sentAt ?? null,
    completed_at: null,
    last_error: null,
    total_count: 0,
    sent_count: 0,
    delivered_count: 0,
    clicked_count: 0,
    failed_count: 0,
    expired_count: 0,
    skipped_count: 0,
    skipped_capped_count: 0,
    removed_run_count: 0,
    created_at: now,
    updated_at: now,
  };
}

export interface CreateOptions {
  /** Reads the full row before it is stored and throws to refuse it (the dashboard's payload size check). */
  check?: (row: NotificationRow) => void;
}

/** Builds and stores a new notification in one step; returns its row. */
export async function createNotification(db: Db, fields: NewNotification, now: number, options: CreateOptions = {}): Promise<NotificationRow> {
  const row = newNotificationRow(fields, now);
  options.check?.(row);
  await insertNotification(db, row);
  return row;
}

/** The stored actions column as buttons (null or unreadable: none). */
export function actionsOf(row: Pick<NotificationRow, 'actions'>): ActionButton[] {
  if (!row.actions) return [];
  try {
    const parsed: unknown = JSON.parse(row.actions);
    return Array.isArray(parsed) ? (parsed as ActionButton[]) : [];
  } catch {
    return [];
  }
}
