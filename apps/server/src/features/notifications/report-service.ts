// A notification's report: the performance page's figures and the CSV of its
// deliveries (report.ts), behind the same viewer check.
import { rate, type NotificationPerformance } from '@herald/contracts';
import type { AppContext } from '../../context';
import type { RunRow } from '../../db/schema';
import { iso, isoOrNull } from '../../platform/responses';
import { recordAudit } from '../audit-log/record';
import { abPerformance } from './ab-test';
import { audited, ownedNotification } from './access';
import { notificationReportCsv } from './report';
import * as reports from './report-repository';
import { outcomeCountsOf } from './responses';

export function createNotificationReports(ctx: AppContext) {
  const { db } = ctx;

  return {
    /**
     * The CSV report of a notification (one line per delivery), after the
     * ownership check. The export is logged like the audit log's own, when the
     * download starts: the report is streamed, so its length is not known then.
     */
    async reportCsv(userId: string, id: string): Promise<{ fileName: string; lines: AsyncGenerator<string> }> {
      const row = await ownedNotification(db, userId, id, 'viewer');
      const fileName = `herald-notification-${row.id}.csv`;
      await recordAudit(ctx, audited(userId, row, 'export_run', { detail: { file: fileName } }));
      return { fileName, lines: notificationReportCsv(ctx, row.id) };
    },

    /**
     * The notification's report: the outcome counts, failures grouped by
     * reason and push service (notification_failures), what waits for a
     * retry right now, the spec's rates plus reach and failure share, and
     * its latest runs.
     */
    async performance(userId: string, id: string): Promise<NotificationPerformance> {
      const row = await ownedNotification(db, userId, id, 'viewer');
      const [runs, failures, retrying, ab] = await Promise.all([
        reports.listRunsOfNotification(db, id),
        reports.failuresOfNotification(db, id),
        reports.retryingOfNotification(db, id),
        abPerformance(db, id),
      ]);
      const counts = outcomeCountsOf(row);
      return {
        notification_id: row.id,
        status: row.status,
        total: row.total_count,
        sent: row.sent_count,
        delivered: row.delivered_count,
        clicked: row.clicked_count,
        failed: row.failed_count,
        click_rate: rate(row.clicked_count, row.delivered_count),
        delivery_rate: rate(row.delivered_count, row.sent_count),
        reach_rate: rate(row.delivered_count, counts.targeted),
        failure_rate: rate(row.failed_count, counts.targeted),
        last_error: row.last_error,
        counts,
        skipped: { inactive: Math.max(0, row.skipped_count - row.skipped_capped_count), frequency_cap: row.skipped_capped_count, quiet_hours_deferred: row.quiet_hours_deferred_count },
        failures: failures.map((group) => ({ reason: group.reason, push_service: group.push_service, count: Number(group.count), sample_error: group.sample_error })),
        retrying: retrying.map((group) => ({
          reason: group.reason,
          push_service: group.push_service,
          count: group.count,
          attempt: group.attempt,
          max_attempts: ctx.config.deliveryMaxAttempts,
          next_attempt_at: isoOrNull(group.next_attempt_at),
          sample_error: group.sample_error,
        })),
        runs: runs.map(toRunSummary),
        ...ab,
      };
    },
  };
}

function toRunSummary(run: RunRow) {
  return {
    id: run.id,
    status: run.status,
    due_at: iso(run.due_at),
    started_at: isoOrNull(run.started_at),
    finished_at: isoOrNull(run.finished_at),
    last_error: run.last_error,
    stats: { total: run.total_count, sent: run.sent_count, delivered: run.delivered_count, clicked: run.clicked_count, failed: run.failed_count },
    counts: outcomeCountsOf(run),
  };
}
