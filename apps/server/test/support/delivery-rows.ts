// Delivery rows name only their run, by its number (migrations 0034, 0035):
// a test that reads the rows of a site selects them through its runs, with
// `.where('run_seq', 'in', …)` (of a notification: runSeqsOfNotification in
// src/db/run-seq.ts).
import { sql, type RawBuilder } from 'kysely';

/** The numbers of the runs of this site. */
export function runsOfSite(siteId: string): RawBuilder<number> {
  return sql<number>`(select seq from notification_runs where site_id = ${siteId})`;
}
