// Delivery rows name only their run (migration 0034): a test that reads the
// rows of a notification or a site selects them through its runs.
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../../src/db/schema';

/** For `.where('run_id', 'in', …)`: the runs of this notification (or of any of these). */
export function runsOfNotification(notificationIds: string | string[]) {
  const ids = typeof notificationIds === 'string' ? [notificationIds] : notificationIds;
  return (eb: ExpressionBuilder<Database, 'deliveries'>) => eb.selectFrom('notification_runs').select('notification_runs.id').where('notification_runs.notification_id', 'in', ids);
}

/** For `.where('run_id', 'in', …)`: the runs of this site. */
export function runsOfSite(siteId: string) {
  return (eb: ExpressionBuilder<Database, 'deliveries'>) => eb.selectFrom('notification_runs').select('notification_runs.id').where('notification_runs.site_id', '=', siteId);
}
