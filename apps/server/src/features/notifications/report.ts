// A notification's report as CSV (issue 11): one line per delivery, with the
// same outcome words as the API's counts (sent = accepted by the push service,
// failed, expired, skipped, pending) and the failure reason codes, so the
// lines of each outcome add up to the counts the dashboard shows. Streamed a
// page at a time: a send to a million subscribers never sits in memory.
import type { Kysely } from 'kysely';
import type { Database, DeliveryStatus } from '../../db/schema';
import { pushServiceOf } from '../../delivery/push-services';
import { csvLine } from '../../platform/csv';
import { isoOrNull } from '../../platform/responses';
import * as repo from './report-repository';

const PAGE = 1000;

export const REPORT_COLUMNS = [
  'run_due_at',
  'subscriber_id',
  'browser',
  'os',
  'country',
  'push_service',
  'outcome',
  'reason',
  'error',
  'attempts',
  'next_attempt_at',
  'sent_at',
  'delivered_at',
  'clicked_at',
] as const;

/** The API's outcome word for a delivery state: a 404/410 ("gone") is "expired". */
const OUTCOME: Record<DeliveryStatus, string> = { pending: 'pending', sent: 'sent', failed: 'failed', gone: 'expired', skipped: 'skipped' };

/** The CSV text of a notification's report, line by line (a UTF-8 byte order mark first, for spreadsheets). */
export async function* notificationReportCsv(db: Kysely<Database>, notificationId: string): AsyncGenerator<string> {
  yield `\uFEFF${csvLine(REPORT_COLUMNS)}`;
  let afterRun: string | null = null;
  for (;;) {
    const runs = await repo.runsOfNotificationPage(db, notificationId, afterRun, PAGE);
    for (const run of runs) {
      let afterSubscriber: string | null = null;
      for (;;) {
        const rows = await repo.reportDeliveriesPage(db, run.id, afterSubscriber, PAGE);
        let chunk = '';
        for (const row of rows) {
          chunk += csvLine([
            isoOrNull(run.due_at),
            row.subscriber_id,
            row.browser,
            row.os,
            row.country,
            row.push_service ?? (row.endpoint ? pushServiceOf(row.endpoint) : null),
            OUTCOME[row.status],
            row.reason,
            row.error,
            row.attempts,
            isoOrNull(row.next_attempt_at),
            isoOrNull(row.sent_at),
            isoOrNull(row.delivered_at),
            isoOrNull(row.clicked_at),
          ]);
        }
        if (chunk) yield chunk;
        if (rows.length < PAGE) break;
        afterSubscriber = rows[rows.length - 1]!.subscriber_id;
      }
    }
    if (runs.length < PAGE) return;
    afterRun = runs[runs.length - 1]!.id;
  }
}
