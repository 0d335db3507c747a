// A delivery row names its run by the run's number, notification_runs.seq,
// not by its UUID (migration 0035; docs/storage.md, "Bytes per delivery").
// Everything outside the deliveries table (API, jobs, links, counters) keeps
// the UUID; these turn it into the number inside a query: a primary-key (or
// notification index) read the database evaluates once per statement, so the
// deliveries' run indexes serve the rest. Written as SQL so that they fit a
// query over deliveries joined with anything.
import { sql, type RawBuilder } from 'kysely';

/** For `.where('run_seq', '=', …)`: the number of the run with this id. */
export function runSeqOf(runId: string): RawBuilder<number> {
  return sql<number>`(select seq from notification_runs where id = ${runId})`;
}

/** For `.where('run_seq', 'in', …)`: the numbers of the runs of this notification (or of any of these, at least one). */
export function runSeqsOfNotification(notificationIds: string | readonly string[]): RawBuilder<number> {
  const ids = typeof notificationIds === 'string' ? [notificationIds] : notificationIds;
  return sql<number>`(select seq from notification_runs where notification_id in (${sql.join(ids)}))`;
}
