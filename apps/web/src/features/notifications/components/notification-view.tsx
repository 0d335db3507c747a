import type { Notification, NotificationPerformance, Site } from '@herald/contracts';
import { ExternalLink } from 'lucide-react';
import { useEffect, useRef, type ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { Alert, Button, Card, CardContent, CardHeader, CardTitle, DateTime, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useSegmentOptions } from '../../../lib/segment-options';
import { usePerformanceQuery } from '../api';
import { formatCount, formatPercent, repeatsText, triggerText, TYPE_LABELS } from '../notification-labels';
import { NotificationActions } from './notification-actions';
import { SendingProgress, StatusBadge } from './notification-badges';
import { NotificationPreview } from './notification-preview';

interface NotificationViewProps {
  notification: Notification;
  site: Site | null;
  timeZone: string;
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid gap-1 py-3 sm:grid-cols-3 sm:gap-4">
      <dt className="text-sm font-medium text-slate-600">{label}</dt>
      <dd className="min-w-0 text-sm break-words text-slate-900 sm:col-span-2">{children}</dd>
    </div>
  );
}

function ExternalUrl({ url }: { url: string }) {
  return (
    <a href={url} target="_blank" rel="noopener noreferrer" className="inline-flex max-w-full items-center gap-1 break-all text-indigo-700 hover:underline">
      <span className="min-w-0 break-all">{url}</span>
      <ExternalLink className="size-3.5 shrink-0" aria-hidden="true" />
      <span className="sr-only">(opens in a new tab)</span>
    </a>
  );
}

/**
 * Read-only view of a notification (spec §4: sending, completed, cancelled and
 * failed ones are view-only): every field, its performance (spec §7
 * GET /notifications/{id}/performance) and, when it failed, why.
 */
export function NotificationView({ notification, site, timeZone }: NotificationViewProps) {
  const navigate = useNavigate();
  const sending = notification.status === 'sending';
  const performance = usePerformanceQuery(notification.id, sending);
  // Performance polls only while sending; once the send ends, fetch the final numbers once more.
  const { refetch: refetchPerformance } = performance;
  const wasSending = useRef(sending);
  useEffect(() => {
    if (wasSending.current && !sending) void refetchPerformance();
    wasSending.current = sending;
  }, [sending, refetchPerformance]);
  const segments = useSegmentOptions(notification.segment_id ? notification.site_id : undefined);
  const segmentName = notification.segment_id
    ? (segments.data?.find((s) => s.id === notification.segment_id)?.name ?? (segments.isPending ? 'Loading...' : 'Deleted segment'))
    : 'All Subscribers';
  const failure = notification.status === 'failed' ? (notification.last_error ?? performance.data?.last_error ?? null) : null;

  return (
    <div className="flex flex-col gap-6">
      <div className="flex flex-wrap items-center gap-3">
        <StatusBadge status={notification.status} />
        <NotificationActions notification={notification} placement="view" onDeleted={() => void navigate('/notifications')} />
      </div>

      {notification.status === 'failed' ? (
        <Alert tone="error" title="This notification failed">
          <p data-testid="failure-reason">{failure ?? 'No reason was recorded.'}</p>
        </Alert>
      ) : null}
      {notification.status === 'sending' ? (
        <Card className="p-4 sm:p-5">
          <SendingProgress notification={notification} />
        </Card>
      ) : null}

      <div className="grid gap-6 lg:grid-cols-5">
        <div className="flex min-w-0 flex-col gap-6 lg:col-span-3">
          <PerformanceCard query={performance} recurring={notification.type === 'RECURRING'} timeZone={timeZone} />

          <Card>
            <CardHeader>
              <CardTitle>Details</CardTitle>
            </CardHeader>
            <CardContent className="py-0 sm:py-0">
              <dl className="divide-y divide-slate-200">
                <Row label="Type">{TYPE_LABELS[notification.type]}</Row>
                <Row label="Target Segment">{segmentName}</Row>
                <Row label="Title">{notification.title}</Row>
                <Row label="Message">{notification.message}</Row>
                <Row label="Destination URL">
                  <ExternalUrl url={notification.destination_url} />
                </Row>
                <Row label="Icon">{notification.icon_url ? <ExternalUrl url={notification.icon_url} /> : 'None'}</Row>
                <Row label="Large Image">{notification.image_url ? <ExternalUrl url={notification.image_url} /> : 'None'}</Row>
                <Row label="Action Buttons">
                  {notification.actions.length ? (
                    <ul className="flex flex-col gap-1">
                      {notification.actions.map((action, index) => (
                        <li key={index}>
                          <span className="font-medium">{action.title}</span> → <ExternalUrl url={action.url} />
                        </li>
                      ))}
                    </ul>
                  ) : (
                    'None'
                  )}
                </Row>
                {notification.recurringSchedule ? (
                  <Row label="Schedule">
                    {repeatsText(notification.recurringSchedule)}, from <DateTime value={notification.recurringSchedule.startDate} timeZone={timeZone} />
                    {notification.recurringSchedule.endDate ? (
                      <>
                        {' '}
                        until <DateTime value={notification.recurringSchedule.endDate} timeZone={timeZone} />
                      </>
                    ) : (
                      ' with no end date'
                    )}
                    {notification.recurringSchedule.isActive ? '' : ' (paused)'}
                  </Row>
                ) : null}
                {notification.trigger ? <Row label="Trigger">{triggerText(notification.trigger)}</Row> : null}
                <Row label="Created">
                  <DateTime value={notification.created_at} timeZone={timeZone} />
                </Row>
                {notification.scheduled_at ? (
                  <Row label="Scheduled">
                    <DateTime value={notification.scheduled_at} timeZone={timeZone} />
                  </Row>
                ) : null}
                {notification.sent_at ? (
                  <Row label={notification.type === 'ONE_TIME' ? 'Sent' : 'Last sent'}>
                    <DateTime value={notification.sent_at} timeZone={timeZone} />
                  </Row>
                ) : null}
                {notification.completed_at ? (
                  <Row label="Finished">
                    <DateTime value={notification.completed_at} timeZone={timeZone} />
                  </Row>
                ) : null}
              </dl>
            </CardContent>
          </Card>
        </div>

        <aside className="min-w-0 lg:col-span-2" aria-label="Preview">
          <Card className="p-4 sm:p-5 lg:sticky lg:top-20">
            <NotificationPreview
              content={{
                title: notification.title,
                message: notification.message,
                destinationUrl: notification.destination_url,
                iconUrl: notification.icon_url ?? site?.settings.icon ?? '',
                imageUrl: notification.image_url ?? '',
                actions: notification.actions,
                siteUrl: site?.url,
              }}
            />
          </Card>
        </aside>
      </div>
    </div>
  );
}

const METRICS = [
  { key: 'sent', label: 'Sent' },
  { key: 'delivered', label: 'Delivered' },
  { key: 'clicked', label: 'Clicked' },
  { key: 'failed', label: 'Failed' },
  { key: 'click_rate', label: 'Click Rate' },
  { key: 'delivery_rate', label: 'Delivery Rate' },
] as const;

function metricValue(data: NotificationPerformance, key: (typeof METRICS)[number]['key']): string {
  return key === 'click_rate' || key === 'delivery_rate' ? formatPercent(data[key]) : formatCount(data[key]);
}

function PerformanceCard({ query, recurring, timeZone }: { query: ReturnType<typeof usePerformanceQuery>; recurring: boolean; timeZone: string }) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Performance</CardTitle>
      </CardHeader>
      <CardContent>
        {query.isPending ? (
          <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
            <Spinner /> Loading performance...
          </p>
        ) : query.isError ? (
          <Alert tone="error" title="Could not load performance">
            <p>{errorMessage(query.error, 'Please try again.')}</p>
            <Button size="sm" variant="secondary" className="mt-2" onClick={() => void query.refetch()}>
              Retry
            </Button>
          </Alert>
        ) : (
          <>
            <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3">
              {METRICS.map((metric) => (
                <div key={metric.key} className="rounded-lg border border-slate-200 bg-slate-50 px-3 py-2.5">
                  <dt className="text-xs font-medium text-slate-600">{metric.label}</dt>
                  <dd className="mt-0.5 text-lg font-semibold text-slate-900 tabular-nums" data-testid={`performance-${metric.key.replace('_', '-')}`}>
                    {metricValue(query.data, metric.key)}
                  </dd>
                </div>
              ))}
            </dl>
            <p className="mt-3 text-xs text-slate-600">Click rate = clicks ÷ delivered. Delivery rate = delivered ÷ sent.</p>
            {recurring ? <RunsTable runs={query.data.runs} timeZone={timeZone} /> : null}
          </>
        )}
      </CardContent>
    </Card>
  );
}

function RunsTable({ runs, timeZone }: { runs: NotificationPerformance['runs']; timeZone: string }) {
  if (runs.length === 0) return <p className="mt-4 text-sm text-slate-600">No runs yet.</p>;
  return (
    <div className="mt-4 overflow-x-auto rounded-lg border border-slate-200" tabIndex={0} role="region" aria-label="Runs">
      <table className="min-w-full text-left text-sm">
        <caption className="sr-only">Each run of this recurring notification</caption>
        <thead className="bg-slate-50 text-xs text-slate-600 uppercase">
          <tr>
            <th scope="col" className="px-3 py-2 font-semibold">Run</th>
            <th scope="col" className="px-3 py-2 font-semibold">Status</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Sent</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Delivered</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Clicked</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Failed</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-200">
          {runs.map((run) => (
            <tr key={run.id} data-testid="performance-run">
              <th scope="row" className="px-3 py-2 font-normal whitespace-nowrap">
                <DateTime value={run.started_at ?? run.due_at} timeZone={timeZone} />
              </th>
              <td className="px-3 py-2">
                <span className="capitalize">{run.status}</span>
                {run.last_error ? <span className="block text-xs text-red-700">{run.last_error}</span> : null}
              </td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.stats.sent)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.stats.delivered)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.stats.clicked)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.stats.failed)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
