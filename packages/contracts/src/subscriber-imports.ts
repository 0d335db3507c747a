import { z } from 'zod';
import { envelope } from './common';

// Importing subscribers from another push platform (docs/product.md,
// "Importing subscribers"): a CSV (header row) or JSON Lines file of browser
// subscriptions, read as a stream by a background job. Field names are fixed
// so exports of other tools can be mapped to them with a spreadsheet.

/** Columns an import file may carry; the first three are required on every row. */
export const SUBSCRIBER_IMPORT_FIELDS = [
  'endpoint',
  'p256dh',
  'auth',
  'vapid_public_key',
  'created_at',
  'browser',
  'os',
  'country',
  'language',
  'timezone',
  'tags',
  'external_id',
  // Herald's export writes active or inactive: an inactive row is not imported (an import never brings back someone who unsubscribed).
  'status',
] as const;
export type SubscriberImportField = (typeof SUBSCRIBER_IMPORT_FIELDS)[number];

/** Largest import file accepted (a million rows of real subscriptions is about 400 MB). */
export const SUBSCRIBER_IMPORT_MAX_BYTES = 1024 * 1024 * 1024;

export const SUBSCRIBER_IMPORT_STATUSES = ['queued', 'running', 'done', 'failed'] as const;
export type SubscriberImportStatus = (typeof SUBSCRIBER_IMPORT_STATUSES)[number];

/** Why a row was not imported; the report names one per rejected row. */
export const SUBSCRIBER_IMPORT_REJECT_REASONS = ['bad_row', 'bad_key', 'endpoint_not_allowed', 'duplicate', 'unknown_vapid_key', 'inactive'] as const;
export type SubscriberImportRejectReason = (typeof SUBSCRIBER_IMPORT_REJECT_REASONS)[number];

export const subscriberImport = z.object({
  id: z.string(),
  site_id: z.string(),
  status: z.enum(SUBSCRIBER_IMPORT_STATUSES),
  file_name: z.string(),
  /** Bytes of the file read so far, and its size: the progress bar's fraction. */
  bytes_read: z.number().int(),
  file_size: z.number().int(),
  rows_read: z.number().int(),
  imported: z.number().int(),
  updated: z.number().int(),
  rejected: z.number().int(),
  /** Whether imported subscribers enter the site's active welcome campaign (off unless asked). */
  enrol_in_welcome_campaign: z.boolean(),
  /** Why the whole import stopped (status failed), else null. */
  error: z.string().nullable(),
  /** CSV of rejected rows with the reason per row; null until the import has finished. */
  report_url: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type SubscriberImport = z.infer<typeof subscriberImport>;

export const subscriberImportResponse = envelope(z.object({ import: subscriberImport }));
export const subscriberImportsResponse = envelope(z.object({ imports: z.array(subscriberImport) }));
export const subscriberImportParams = z.object({ importId: z.string().min(1).max(100) });
