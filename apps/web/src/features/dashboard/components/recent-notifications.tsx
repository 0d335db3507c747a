import { DASHBOARD_LIST_LIMIT, type RecentNotification } from '@herald/contracts';
import { Link } from 'react-router';
import { shareText, STATUS_BADGES } from '../../../components/send-outcome';
import { Badge } from '../../../components/ui';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { formatCount, formatDateTime, formatRate } from '../dashboard-format';
import { ListCard, ListCardEmpty, textLinkStyles } from './list-card';

/** The date a send is listed by: when a push service first accepted it, else (a failed send) when it finished. */
function dateLine(item: RecentNotification, timeZone: string) {
  if (item.sent_at) return <time dateTime={item.sent_at}>{formatDateTime(item.sent_at, timeZone)}</time>;
  if (item.finished_at) {
    return (
      <>
        Failed <time dateTime={item.finished_at}>{formatDateTime(item.finished_at, timeZone)}</time>
      </>
    );
  }
  return null;
}

/**
 * Spec §2 Dashboard: Recent Notifications (title, message, sent date,
 * click_rate shown as CTR, sent_count), with the send's status and its
 * failures (issue 11): a failed send shows as failed, not as "0 sent".
 */
export function RecentNotifications({ items, timeZone, className }: { items: RecentNotification[]; timeZone: string; className?: string }) {
  const shown = items.slice(0, DASHBOARD_LIST_LIMIT);
  return (
    <ListCard title="Recent Notifications" help={DASHBOARD_HELP.recentNotifications} className={className}>
      {shown.length === 0 ? (
        <ListCardEmpty>
          No notifications sent yet.{' '}
          <Link to="/notifications/new" className={textLinkStyles}>
            Create your first notification!
          </Link>
        </ListCardEmpty>
      ) : (
        <ul className="divide-y divide-slate-200">
          {shown.map((item) => {
            const badge = STATUS_BADGES[item.status];
            const failed = item.status === 'failed';
            return (
              <li key={item.id} className="flex flex-col gap-1 py-3" data-testid={`recent-${item.id}`}>
                <div className="flex items-start justify-between gap-3">
                  {/* The title opens the notification's own view: sent, delivered, clicked and failures. */}
                  <Link
                    to={`/notifications/${encodeURIComponent(item.id)}`}
                    className="min-w-0 rounded font-medium break-words text-slate-900 hover:text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
                  >
                    {item.title}
                  </Link>
                  {failed ? (
                    <Badge tone={badge.tone} className="shrink-0">
                      {badge.label}
                    </Badge>
                  ) : (
                    <span className="shrink-0 rounded-full bg-indigo-50 px-2 py-0.5 text-xs font-semibold text-indigo-700 tabular-nums">
                      {formatRate(item.click_rate)} CTR
                    </span>
                  )}
                </div>
                <p className="line-clamp-2 text-sm break-words text-slate-600">{item.message}</p>
                <p className="text-xs text-slate-600">
                  {dateLine(item, timeZone)}
                  <span aria-hidden="true"> · </span>
                  <span className="tabular-nums" data-testid="recent-sent">
                    {formatCount(item.sent_count)} sent
                  </span>
                  {item.failed_count > 0 ? (
                    <>
                      <span aria-hidden="true"> · </span>
                      <span className="font-medium text-red-700 tabular-nums" data-testid="recent-failed">
                        {formatCount(item.failed_count)} failed ({shareText(item.failed_count, item.counts.targeted)})
                      </span>
                    </>
                  ) : null}
                  {item.status === 'sending' ? (
                    <>
                      <span aria-hidden="true"> · </span>
                      <span>sending</span>
                    </>
                  ) : null}
                </p>
              </li>
            );
          })}
        </ul>
      )}
    </ListCard>
  );
}
