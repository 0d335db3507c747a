// Delivery rows name only their run, by its number (migrations 0034, 0035):
// a test that reads the rows of a notification or a site selects them
// through its runs, with `.where('run_seq', 'in', …)`.
import { sql, type RawBuilder } from 'kysely';
import { runSeqsOfNotification } from '../../src/db/run-seq';

/** The numbers of the runs of this notification (or of any of these). */
export function runsOfNotification(notificationIds: string | string[]): RawBuilder<number> {
  return runSeqsOfNotification(notificationIds);
}

/** The numbers of the runs of this site. */
export function runsOfSite(siteId: string): RawBuilder<number> {
  return sql<number>`(select seq from notification_runs where site_id = ${siteId})`;
}
