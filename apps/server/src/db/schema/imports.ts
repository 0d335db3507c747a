// Importing subscribers (docs/product.md, "Importing subscribers"): the
// uploaded files, the report of rejected lines, and the endpoints seen so far.
import type { SubscriberImportRejectReason, SubscriberImportStatus } from '@herald/contracts';
import type { ColumnType } from 'kysely';
import type { Counter, DefaultedFlag, Millis } from './columns';

export type SubscriberImportFormat = 'csv' | 'jsonl';

export interface SubscriberImportsTable {
  id: string;
  site_id: string;
  created_by: string | null;
  status: SubscriberImportStatus;
  /** The name the uploader's browser gave the file (shown, never used as a path). */
  file_name: string;
  /** The file's name in DATA_DIR/imports (a random id); deleted when the import finishes. */
  stored_file: string;
  file_size: number;
  format: SubscriberImportFormat;
  /** JSON array of the CSV header row, once read (a resumed import needs it); null for JSON Lines. */
  columns: string | null;
  /** The site key rows without a vapid_public_key were subscribed with. */
  vapid_key_id: string;
  enrol_in_welcome_campaign: DefaultedFlag;
  /** Where the last committed batch ended: a resumed import starts here. */
  bytes_read: Counter;
  lines_read: Counter;
  rows_read: Counter;
  imported: Counter;
  updated: Counter;
  rejected: Counter;
  /** Claims so far: the first run, then each resume after a worker died. */
  attempts: Counter;
  /** While running: the claim's end, renewed every batch; past it the scheduler takes the import over. */
  lease_until: Millis | null;
  error: string | null;
  created_at: Millis;
  finished_at: Millis | null;
}

export interface SubscriberImportRejectsTable {
  import_id: string;
  line: number;
  reason: SubscriberImportRejectReason;
  detail: string;
  endpoint: string | null;
}

/** The subscribers an import wrote so far, with the line each came from. */
export interface SubscriberImportSeenTable {
  import_id: string;
  subscriber_id: string;
  line: ColumnType<number, number, number>;
}
