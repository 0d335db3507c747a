import { DASHBOARD_LIST_LIMIT } from '@herald/contracts';
import { Link } from 'react-router';
import { Badge } from '../../../components/ui';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { useRecurringNotificationsQuery } from '../api';
import { recurrenceText } from '../dashboard-format';
import { ListCard, ListCardEmpty, ListCardStatus, textLinkStyles } from './list-card';

const NEW_RECURRING = '/notifications/new?type=RECURRING';

/** Spec §2 Dashboard: the first 5 recurring notifications with their schedule, state and an Edit link. */
export function RecurringPanel({ siteId, className }: { siteId: string; className?: string }) {
  const query = useRecurringNotificationsQuery(siteId);
  const items = (query.data ?? []).slice(0, DASHBOARD_LIST_LIMIT);
  return (
    <ListCard title="Recurring Notifications" help={DASHBOARD_HELP.recurringNotifications} newLink={{ to: NEW_RECURRING, label: 'New recurring notification' }} className={className}>
      {query.isPending ? (
        <ListCardStatus state="pending" what="recurring notifications" onRetry={() => void query.refetch()} />
      ) : query.isError ? (
        <ListCardStatus state="error" what="recurring notifications" onRetry={() => void query.refetch()} />
      ) : items.length === 0 ? (
        <ListCardEmpty>
          No recurring notifications yet.{' '}
          <Link to={NEW_RECURRING} className={textLinkStyles}>
            Create a recurring notification
          </Link>
        </ListCardEmpty>
      ) : (
        <ul className="divide-y divide-slate-200">
          {items.map((item) => {
            const schedule = item.recurringSchedule;
            const active = schedule?.isActive ?? false;
            return (
              <li key={item.id} className="flex items-center justify-between gap-3 py-3">
                <div className="min-w-0">
                  <p className="font-medium break-words text-slate-900">{item.title}</p>
                  <p className="mt-0.5 flex flex-wrap items-center gap-2 text-xs text-slate-600">
                    {schedule ? <span>{recurrenceText(schedule.intervalType, schedule.intervalValue)}</span> : null}
                    <Badge tone={active ? 'success' : 'neutral'}>{active ? 'Active' : 'Inactive'}</Badge>
                  </p>
                </div>
                <Link to={`/notifications/${encodeURIComponent(item.id)}/edit`} aria-label={`Edit ${item.title}`} className={`${textLinkStyles} shrink-0 text-sm`}>
                  Edit
                </Link>
              </li>
            );
          })}
        </ul>
      )}
    </ListCard>
  );
}
