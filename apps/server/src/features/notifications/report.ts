// A notification's report as CSV (issue 11): one line per delivery, with the
// same outcome words as the API's counts (sent = accepted by the push service,
// failed, expired, skipped, pending) and the failure reason codes, so the
// lines of each outcome add up to the counts the dashboard shows. Streamed a
// page at a time: a send to a million subscribers never sits in memory.
// Deliveries retention compacted (docs/storage.md, "Retention") are one line
// per group at the end instead, with no run or subscriber: `deliveries` says how many it
// stands for (1 on every other line), `delivered` and `clicked` how many of
// them had those beacons, so the columns still add up to the counts.
import crypto from 'node:crypto';
import { REPORT_COUNT_COLUMNS } from '@herald/contracts';
import type { AppContext } from '../../context';
import type { DeliveryStatus } from '../../db/schema';
import { pushServiceOf } from '../../delivery/push-services';
import { csvLine } from '../../platform/csv';
import { isoOrNull } from '../../platform/responses';
import { compactedGroupsOfNotification, holdCompactionForReport, releaseReportHold, REPORT_READ_HOLD_MS } from '../retention/compacted';
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
  ...REPORT_COUNT_COLUMNS,
] as const;

/** The API's outcome word for a delivery state: a 404/410 ("gone") is "expired". */
const OUTCOME: Record<DeliveryStatus, string> = { pending: 'pending', sent: 'sent', failed: 'failed', gone: 'expired', skipped: 'skipped' };

/**
 * The CSV text of a notification's report, line by line (a UTF-8 byte order
 * mark first, for spreadsheets). Retention leaves the notification's rows
 * alone while the report is read (docs/storage.md, "Retention"): its kept
 * rows and its compacted groups are read at different moments, and a row
 * compacted in between would be counted twice. The hold is refreshed as the
 * download goes on.
 */
export async function* notificationReportCsv(ctx: Pick<AppContext, 'db' | 'dbKind' | 'clock'>, notificationId: string): AsyncGenerator<string> {
  const { db, dbKind, clock } = ctx;
  const readId = crypto.randomUUID();
  let heldUntil = 0;
  const hold = async () => {
    const now = clock.now();
    // Refreshed once a tenth of the hold has passed: a write a minute at most, whatever the pace.
    if (heldUntil - now > REPORT_READ_HOLD_MS * 0.9) return;
    heldUntil = now + REPORT_READ_HOLD_MS;
    await holdCompactionForReport(db, dbKind, { readId, notificationId }, now, heldUntil);
  };
  await hold();
  try {
    yield* reportLines(db, notificationId, hold);
  } finally {
    // Also when the download is cut short (the stream ends the generator).
    await releaseReportHold(db, readId);
  }
}

async function* reportLines(db: AppContext['db'], notificationId: string, hold: () => Promise<void>): AsyncGenerator<string> {
  yield `\uFEFF${csvLine(REPORT_COLUMNS)}`;
  let afterRun: string | null = null;
  for (;;) {
    const runs = await repo.runsOfNotificationPage(db, notificationId, afterRun, PAGE);
    for (const run of runs) {
      let afterSubscriber: number | null = null;
      for (;;) {
        await hold();
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
            1,
            row.delivered_at === null ? 0 : 1,
            row.clicked_at === null ? 0 : 1,
          ]);
        }
        if (chunk) yield chunk;
        if (rows.length < PAGE) break;
        afterSubscriber = rows[rows.length - 1]!.subscriber_seq;
      }
    }
    if (runs.length < PAGE) break;
    afterRun = runs[runs.length - 1]!.id;
  }
  // Deliveries retention compacted: one line per group, no run or subscriber.
  let compacted = '';
  for (const group of await compactedGroupsOfNotification(db, notificationId)) {
    const noSubscriber = [null, null, null, null];
    const noAttempt = [null, null, null, null, null, null];
    compacted += csvLine([null, ...noSubscriber, group.push_service || null, OUTCOME[group.status], group.reason || null, ...noAttempt, group.count, group.delivered, group.clicked]);
  }
  if (compacted) yield compacted;
}
