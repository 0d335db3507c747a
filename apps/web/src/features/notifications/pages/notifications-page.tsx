import { NOTIFICATION_STATUSES, type Notification } from '@herald/contracts';
import { AlertTriangle, Bell, CalendarClock, Clock, Plus, Repeat, Rss, Users, Zap } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { formatCount, OutcomeSummary, shareText } from '../../../components/send-outcome';
import { Alert, Badge, Button, Card, DateTime, EmptyState, PageHeader, Pager, Spinner, ToggleGroup, type ToggleItem } from '../../../components/ui';
import { RoleGatedLink } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { reachText, useAudienceCount } from '../../../lib/audience';
import { audienceLabel, useSegmentOptions } from '../../../lib/segment-options';
import { useCurrentSite } from '../../../lib/sites-store';
import { FILTER_STATUSES, NOTIFICATIONS_PAGE_SIZE, useNotificationsQuery, type StatusFilter } from '../api';
import { NotificationActions } from '../components/notification-actions';
import { LocalTimeBadge, QuietHoursBadge } from '../components/local-time-badge';
import { SendingProgress, StatusBadge, TypeBadge } from '../components/notification-badges';
import { firedText, repeatsText, triggerText } from '../notification-labels';
import { NoSiteSelected } from '../../../components/no-site-selected';

/** Spec §2 Notifications list: the status filter buttons, in order, plus failed and cancelled (issue 11: the counts add up to All). */
const FILTERS: readonly StatusFilter[] = ['all', 'draft', 'scheduled', 'sending', 'completed', 'failed', 'cancelled'];
const FILTER_LABELS: Record<StatusFilter, string> = {
  all: 'All',
  draft: 'Draft',
  scheduled: 'Scheduled',
  sending: 'Sending',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

function isStatusFilter(value: string | null): value is StatusFilter {
  return FILTERS.some((filter) => filter === value);
}

const NewNotificationLink = ({ children = 'New Notification' }: { children?: string }) => (
  <RoleGatedLink to="/notifications/new" needed="editor" action="create notifications" icon={<Plus className="size-4" aria-hidden="true" />}>
    {children}
  </RoleGatedLink>
);

/** "3 notifications", "1 draft notification". */
function countLine(count: number, filter: StatusFilter): string {
  const noun = count === 1 ? 'notification' : 'notifications';
  return filter === 'all' ? `${count} ${noun}` : `${count} ${filter} ${noun}`;
}

export function NotificationsPage() {
  const { currentSite, loaded } = useCurrentSite();

  if (!currentSite) {
    return (
      <>
        <PageHeader title="Notifications" />
        <NoSiteSelected loaded={loaded} icon={<Bell className="size-6" />} description="Create or select a site to manage its notifications." />
      </>
    );
  }
  return <NotificationsList key={currentSite.id} siteId={currentSite.id} timeZone={currentSite.settings.timezone} />;
}

function NotificationsList({ siteId, timeZone }: { siteId: string; timeZone: string }) {
  // The filter lives in the address (?status=) so a filtered list can be linked to and survives a reload.
  const [params, setParams] = useSearchParams();
  const requested = params.get('status');
  const filter: StatusFilter = isStatusFilter(requested) ? requested : 'all';
  // Pages of NOTIFICATIONS_PAGE_SIZE; another filter starts again at page 1.
  const [paging, setPaging] = useState<{ filter: StatusFilter; page: number }>({ filter, page: 1 });
  const requestedPage = paging.filter === filter ? paging.page : 1;
  const query = useNotificationsQuery(siteId, filter, requestedPage);
  const counts = query.data?.counts;
  // The server sends `all`; summing the statuses covers one that does not.
  const total = counts ? (counts.all ?? NOTIFICATION_STATUSES.reduce((sum, status) => sum + (counts[status] ?? 0), 0)) : undefined;
  const countOf = (value: StatusFilter) => (counts ? (value === 'all' ? total : FILTER_STATUSES[value].reduce((sum, status) => sum + (counts[status] ?? 0), 0)) : undefined);

  const items: ToggleItem<StatusFilter>[] = FILTERS.map((value) => ({ value, label: FILTER_LABELS[value], adornment: countOf(value) }));
  // The count line and the pages come from the exact counts, not from the rows of one page.
  const filterTotal = countOf(filter) ?? query.data?.notifications.length ?? 0;
  const pages = Math.max(1, Math.ceil(filterTotal / NOTIFICATIONS_PAGE_SIZE));
  const page = Math.min(requestedPage, pages);
  const goTo = (next: number) => setPaging({ filter, page: Math.min(pages, Math.max(1, next)) });
  // The last page emptied (its notifications deleted or moved to another status): show the new last page.
  const pastTheEnd = query.data !== undefined && !query.isPlaceholderData && requestedPage > pages;
  useEffect(() => {
    if (pastTheEnd) setPaging({ filter, page: pages });
  }, [pastTheEnd, filter, pages]);

  return (
    <>
      <PageHeader title="Notifications" description="Create, schedule and track the notifications you send to your subscribers." actions={<NewNotificationLink />} />

      <div className="mb-4 flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
        <ToggleGroup
          label="Filter by status"
          items={items}
          value={filter}
          onValueChange={(next) => setParams(next === 'all' ? {} : { status: next }, { replace: true })}
        />
        {query.data ? (
          <p className="text-sm text-slate-600" role="status" data-testid="notification-count">
            {countLine(filterTotal, filter)}
          </p>
        ) : null}
      </div>

      {query.isPending ? (
        <p className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading notifications...
        </p>
      ) : query.isError ? (
        <Alert tone="error" title="Could not load notifications">
          <p>{errorMessage(query.error, 'Please try again.')}</p>
          <Button size="sm" variant="secondary" className="mt-2" onClick={() => void query.refetch()}>
            Retry
          </Button>
        </Alert>
      ) : query.data.notifications.length === 0 ? (
        filter === 'all' ? (
          <EmptyState
            icon={<Bell className="size-6" />}
            title="No notifications yet"
            description="Create your first notification to reach your subscribers."
            action={<NewNotificationLink>Create Notification</NewNotificationLink>}
          />
        ) : (
          <EmptyState icon={<Bell className="size-6" />} title={`No ${filter} notifications`} description="Choose another status to see more." />
        )
      ) : (
        <ul className="flex flex-col gap-3" aria-label="Notifications">
          {query.data.notifications.map((notification) => (
            <li key={notification.id}>
              <NotificationCard notification={notification} siteId={siteId} timeZone={timeZone} />
            </li>
          ))}
        </ul>
      )}

      {query.data && pages > 1 ? <Pager page={page} pages={pages} onPrevious={() => goTo(page - 1)} onNext={() => goTo(page + 1)} /> : null}
    </>
  );
}

/** Every card names its audience: "All Subscribers" or the segment (issue 11). */
function TargetName({ siteId, segmentId }: { siteId: string; segmentId: string | null }) {
  const segments = useSegmentOptions(segmentId ? siteId : undefined);
  return <>{audienceLabel(segmentId, segments)}</>;
}

/** A draft says whom it would reach if it went now, and warns when that is nobody. */
function ReachLine({ siteId, segmentId }: { siteId: string; segmentId: string | null }) {
  const audience = useAudienceCount(siteId, segmentId);
  if (!audience.isSuccess) return null;
  const { count } = audience.data;
  return (
    <p className={count === 0 ? 'flex items-center gap-1.5 text-xs font-medium text-amber-800' : 'flex items-center gap-1.5 text-xs text-slate-700'} data-testid="reach">
      {count === 0 ? <AlertTriangle className="size-3.5" aria-hidden="true" /> : <Users className="size-3.5" aria-hidden="true" />}
      {reachText(audience.data)}
      {count === 0 ? ' (nobody is subscribed to this target yet)' : ''}
    </p>
  );
}

function NotificationCard({ notification, siteId, timeZone }: { notification: Notification; siteId: string; timeZone: string }) {
  const titleId = `notification-${notification.id}-title`;
  const { recurringSchedule: schedule, trigger, counts } = notification;
  const finished = notification.status === 'completed' || notification.status === 'completed_with_errors' || notification.status === 'failed';
  const withFailures = notification.status === 'failed' || (notification.status === 'completed_with_errors' && counts.failed > 0);
  return (
    <Card className="p-4 sm:p-5">
      <article aria-labelledby={titleId} data-testid={`notification-${notification.id}`} className="flex flex-col gap-3">
        <div className="flex flex-col gap-3 lg:flex-row lg:items-start lg:justify-between">
          <div className="min-w-0 flex-1">
            <div className="flex flex-wrap items-center gap-2">
              <h2 id={titleId} className="min-w-0 text-base font-semibold break-words text-slate-900">
                {notification.title}
              </h2>
              <StatusBadge notification={notification} />
              <TypeBadge type={notification.type} />
              <LocalTimeBadge notification={notification} />
              <QuietHoursBadge notification={notification} />
              {notification.source === 'rss' ? (
                <Badge tone="neutral" className="shrink-0">
                  <Rss className="size-3" aria-hidden="true" /> RSS item
                </Badge>
              ) : null}
            </div>
            <p className="mt-1 text-sm break-words text-slate-700">{notification.message}</p>
          </div>
          <div className="shrink-0">
            <NotificationActions notification={notification} placement="list" />
          </div>
        </div>

        <dl className="flex flex-wrap gap-x-5 gap-y-1 text-xs text-slate-600">
          <div className="flex gap-1">
            <dt className="flex items-center gap-1">
              <Users className="size-3.5" aria-hidden="true" />
              To
            </dt>
            <dd className="font-medium text-slate-800" data-testid="target">
              <TargetName siteId={siteId} segmentId={notification.segment_id} />
            </dd>
          </div>
          <div className="flex gap-1">
            <dt>Created</dt>
            <dd>
              <DateTime value={notification.created_at} timeZone={timeZone} />
            </dd>
          </div>
          {notification.scheduled_at ? (
            <div className="flex gap-1">
              <dt className="flex items-center gap-1">
                <Clock className="size-3.5" aria-hidden="true" />
                Scheduled
              </dt>
              <dd>
                <DateTime value={notification.scheduled_at} timeZone={timeZone} />
              </dd>
            </div>
          ) : null}
          {notification.sent_at ? (
            <div className="flex gap-1">
              {/* A recurring or triggered notification sends again and again: its date is the latest send. */}
              <dt>{notification.type === 'ONE_TIME' ? 'Sent on' : 'Last sent'}</dt>
              <dd>
                <DateTime value={notification.sent_at} timeZone={timeZone} />
              </dd>
            </div>
          ) : null}
          {schedule?.nextRunAt ? (
            <div className="flex gap-1">
              <dt className="flex items-center gap-1">
                <CalendarClock className="size-3.5" aria-hidden="true" />
                Next run
              </dt>
              <dd data-testid="next-run">
                <DateTime value={schedule.nextRunAt} timeZone={timeZone} />
              </dd>
            </div>
          ) : null}
        </dl>

        {schedule ? (
          <p className="flex items-center gap-1.5 text-xs font-medium text-indigo-800">
            <Repeat className="size-3.5" aria-hidden="true" />
            {repeatsText(schedule)}
            {!schedule.isActive ? <span className="font-normal text-slate-600">(paused)</span> : null}
          </p>
        ) : null}
        {trigger ? (
          <p className="flex flex-wrap items-center gap-1.5 text-xs font-medium text-indigo-800">
            <Zap className="size-3.5" aria-hidden="true" />
            {triggerText(trigger)}
            <span className="font-normal text-slate-600" data-testid="fire-count">
              · {firedText(notification.fire_count ?? 0)}
            </span>
          </p>
        ) : null}

        {notification.status === 'draft' ? <ReachLine siteId={siteId} segmentId={notification.segment_id} /> : null}
        {notification.status === 'sending' ? <SendingProgress notification={notification} /> : null}
        {finished || (counts.targeted > 0 && notification.status !== 'sending') ? <OutcomeSummary counts={counts} /> : null}
        {withFailures ? (
          <p className="rounded-md bg-red-50 px-3 py-2 text-xs text-red-800" data-testid="failure-reason">
            {notification.status === 'failed' ? (
              <>
                <span className="font-semibold">Failed: </span>
                {notification.last_error ?? 'no push service accepted it.'}
              </>
            ) : (
              <span className="font-semibold">
                {formatCount(counts.failed)} of {formatCount(counts.targeted)} failed ({shareText(counts.failed, counts.targeted)}).
              </span>
            )}{' '}
            <Link to={`/notifications/${encodeURIComponent(notification.id)}`} className="font-medium underline hover:no-underline">
              See why
            </Link>
          </p>
        ) : null}
      </article>
    </Card>
  );
}
