import { DASHBOARD_LIST_LIMIT, type RecentNotification } from '@herald/contracts';
import { Link } from 'react-router';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { formatCount, formatDateTime, formatRate } from '../dashboard-format';
import { ListCard, ListCardEmpty, textLinkStyles } from './list-card';

/** Spec §2 Dashboard: Recent Notifications (title, message, sent date, click_rate shown as CTR, sent_count). */
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
          {shown.map((item) => (
            <li key={item.id} className="flex flex-col gap-1 py-3">
              <div className="flex items-start justify-between gap-3">
                {/* The title opens the notification's own view: sent, delivered and clicked. */}
                <Link
                  to={`/notifications/${encodeURIComponent(item.id)}`}
                  className="min-w-0 rounded font-medium break-words text-slate-900 hover:text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
                >
                  {item.title}
                </Link>
                <span className="shrink-0 rounded-full bg-indigo-50 px-2 py-0.5 text-xs font-semibold text-indigo-700 tabular-nums">
                  {formatRate(item.click_rate)} CTR
                </span>
              </div>
              <p className="line-clamp-2 text-sm break-words text-slate-600">{item.message}</p>
              <p className="text-xs text-slate-600">
                <time dateTime={item.sent_at}>{formatDateTime(item.sent_at, timeZone)}</time>
                <span aria-hidden="true"> · </span>
                <span className="tabular-nums">{formatCount(item.sent_count)} sent</span>
              </p>
            </li>
          ))}
        </ul>
      )}
    </ListCard>
  );
}
