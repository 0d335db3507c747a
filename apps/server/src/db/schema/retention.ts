// Delivery retention (migration 0027; docs/storage.md, "Retention"): what
// compaction keeps of the delivery rows it removes.
import type { Millis } from './columns';
import type { DeliveryStatus } from './sending';

/**
 * Per notification, A/B variant, state, reason and push service: the
 * deliveries compaction removed, and how many of them were delivered /
 * clicked. Written in the transaction that deletes them, so rows + these
 * count each delivery once.
 */
export interface CompactedDeliveriesTable {
  notification_id: string;
  /** -1: not an A/B send. */
  variant_index: number;
  status: DeliveryStatus;
  /** The failure code or skip cause; '' for none. */
  reason: string;
  /** '' for none. */
  push_service: string;
  count: number;
  delivered: number;
  clicked: number;
}

/**
 * A CSV report download under way (migration 0039): retention leaves its
 * notification's rows alone until `until`, so the report's lines and its
 * compacted groups count each delivery once.
 */
export interface ReportReadsTable {
  id: string;
  notification_id: string;
  until: Millis;
}
