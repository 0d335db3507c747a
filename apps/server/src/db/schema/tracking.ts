// Beacons (delivered, clicked) recorded but not yet added to the counters
// (docs/delivery.md, "How beacons are counted"; migration 0028).
import type { Generated } from 'kysely';
import type { Millis } from './columns';

/** One counted beacon waiting for the fold: 1 delivered and/or 1 clicked of a run, at a time. */
export interface UncountedBeaconsTable {
  id: Generated<number>;
  site_id: string;
  notification_id: string;
  run_id: string;
  at: Millis;
  delivered: number;
  clicked: number;
}
