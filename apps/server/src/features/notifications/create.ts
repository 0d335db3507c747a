// The one way a notification row comes into being, whoever creates it: the
// dashboard (create, duplicate), an RSS feed item, a welcome campaign step.
// Counters start at zero and the JSON columns are encoded here, so no caller
// builds a row by hand.
import crypto from 'node:crypto';
import type { ActionButton, NotificationSource, NotificationStatus, NotificationType } from '@herald/contracts';
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

export interface NewNotification {
  siteId: string;
  type: NotificationType;
  source: NotificationSource;
  content: NotificationContent;
  segmentId: string | null;
  status: NotificationStatus;
  scheduledAt?: number | null;
  /** When its send began, for a notification created already sending (an RSS item). */
  sentAt?: number | null;
  /** A caller that must know the id before the row exists (to reference it in the same transaction) passes it. */
  id?: string;
}

/** The full row of a new notification, not yet stored. */
function newNotificationRow(fields: NewNotification, now: number): NotificationRow {
  const { content } = fields;
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
