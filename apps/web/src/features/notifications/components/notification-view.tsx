import type { Notification, NotificationPerformance, Site } from '@herald/contracts';
import { Download, ExternalLink, RefreshCw } from 'lucide-react';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';
import { nextStep, PUSH_SERVICE_LABELS, REASON_LABELS, shareText } from '../../../components/send-outcome';
import { Alert, Button, Card, CardContent, CardHeader, CardTitle, DateTime, Spinner, Tooltip } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { audienceLabel, useSegmentOptions } from '../../../lib/segment-options';
import { downloadReport, usePerformanceQuery } from '../api';
import { firedText, formatCount, formatPercent, repeatsText, triggerText, TYPE_LABELS } from '../notification-labels';
import { AbTestReport } from './ab-test-report';
import { NotificationActions } from './notification-actions';
import { LocalTimeBadge, QuietHoursLine } from './local-time-badge';
import { SendingProgress, StatusBadge } from './notification-badges';
import { ThrottleEstimate } from './throttle-estimate';
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
  const segmentName = audienceLabel(notification.segment_id, segments);
  const failure = notification.last_error ?? performance.data?.last_error ?? null;
  const { counts } = notification;

  return (
    <div className="flex flex-col gap-6">
      <div className="flex flex-wrap items-center gap-3">
        <StatusBadge notification={notification} />
        <LocalTimeBadge notification={notification} />
        <NotificationActions notification={notification} placement="view" onDeleted={() => void navigate('/notifications')} />
      </div>

      {notification.status === 'failed' ? (
        <Alert tone="error" title="This notification failed: no push service accepted it">
          <p data-testid="failure-reason">{failure ?? 'No reason was recorded.'}</p>
        </Alert>
      ) : null}
      {notification.status === 'completed_with_errors' ? (
        <Alert tone="warning" title={`Completed with errors: ${formatCount(counts.failed)} of ${formatCount(counts.targeted)} failed (${shareText(counts.failed, counts.targeted)})`}>
          <p data-testid="failure-reason">{failure ?? 'See the reasons below.'}</p>
        </Alert>
      ) : null}
      {notification.status === 'sending' ? (
        <Card className="flex flex-col gap-4 p-4 sm:p-5">
          <SendingProgress notification={notification} />
          <ThrottleEstimate notification={notification} timeZone={timeZone} />
          {performance.data?.retrying.length ? <RetryingNotice groups={performance.data.retrying} timeZone={timeZone} /> : null}
        </Card>
      ) : null}

      <div className="grid gap-6 lg:grid-cols-5">
        <div className="flex min-w-0 flex-col gap-6 lg:col-span-3">
          <PerformanceCard notification={notification} query={performance} recurring={notification.type === 'RECURRING'} timeZone={timeZone} />
          {performance.data?.ab_test ? <AbTestReport notificationId={notification.id} siteId={notification.site_id} performance={performance.data} timeZone={timeZone} canPick={site?.role !== 'viewer'} /> : null}
          {performance.data && (performance.data.failures.length > 0 || performance.data.counts.failed > 0) ? <FailuresCard performance={performance.data} /> : null}

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
                {notification.trigger ? (
                  <Row label="Trigger">
                    {triggerText(notification.trigger)} · {firedText(notification.fire_count ?? 0)}
                  </Row>
                ) : null}
                {notification.recurringSchedule?.nextRunAt ? (
                  <Row label="Next run">
                    <DateTime value={notification.recurringSchedule.nextRunAt} timeZone={timeZone} />
                  </Row>
                ) : null}
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

/** The outcome counts, in the order a send goes (contracts delivery-outcomes.ts). */
const COUNTS = [
  { key: 'targeted', label: 'Targeted', help: 'Subscribers the send was meant for when it went out.' },
  { key: 'sent', label: 'Sent', help: 'Accepted by the push services (not yet shown on the device).' },
  { key: 'delivered', label: 'Delivered', help: 'Shown on the device: the service worker reported it.' },
  { key: 'clicked', label: 'Clicked', help: 'Opened by a click.' },
  { key: 'failed', label: 'Failed', help: 'Not accepted, and given up; the reasons are listed below. Expired subscriptions are counted apart.' },
  { key: 'expired', label: 'Expired', help: 'The push service said the subscription no longer exists (404/410): the subscriber was deactivated.' },
  { key: 'skipped', label: 'Skipped', help: "Not sent: the subscriber had unsubscribed (or was removed) by then, or had already had the site's frequency cap of pushes." },
  { key: 'pending', label: 'Pending', help: 'Still to be sent, or waiting for another attempt.' },
] as const;

/**
 * Rates with their denominators: the spec's click and delivery rates (§9),
 * and reach beside them. A rate whose denominator is still 0 is shown as "—",
 * not "0%": nothing was delivered (sent, targeted) to measure it against.
 */
const RATES = [
  { key: 'click_rate', denominator: 'delivered', label: 'Click Rate', help: 'Clicked ÷ delivered (spec). "—" until something is delivered.' },
  { key: 'delivery_rate', denominator: 'sent', label: 'Delivery Rate', help: 'Delivered ÷ sent, where sent is what the push services accepted (spec). "—" until something is accepted.' },
  { key: 'reach_rate', denominator: 'targeted', label: 'Reach', help: 'Delivered ÷ targeted: how many of the people it was meant for got it. "—" until someone is targeted.' },
] as const;

function Metric({ label, help, value, testId }: { label: string; help: string; value: string; testId: string }) {
  return (
    <div className="rounded-lg border border-slate-200 bg-slate-50 px-3 py-2.5">
      <dt className="flex items-center gap-1 text-xs font-medium text-slate-600">
        <span>{label}</span>
        <Tooltip label={`About ${label}`} content={help} />
      </dt>
      <dd className="mt-0.5 text-lg font-semibold text-slate-900 tabular-nums" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

function ExportButton({ notificationId }: { notificationId: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <Button
      size="sm"
      variant="secondary"
      loading={busy}
      icon={<Download className="size-4" aria-hidden="true" />}
      onClick={() => {
        setBusy(true);
        downloadReport(notificationId)
          .catch((error: unknown) => notify(errorMessage(error, 'Failed to export the report')))
          .finally(() => setBusy(false));
      }}
    >
      Export CSV
    </Button>
  );
}

function PerformanceCard({
  notification,
  query,
  recurring,
  timeZone,
}: {
  notification: Notification;
  query: ReturnType<typeof usePerformanceQuery>;
  recurring: boolean;
  timeZone: string;
}) {
  return (
    <Card>
      <CardHeader className="flex flex-row flex-wrap items-center justify-between gap-3">
        <CardTitle>Performance</CardTitle>
        <ExportButton notificationId={notification.id} />
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
            <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4" aria-label="Outcome counts">
              {COUNTS.map((metric) => (
                <Metric key={metric.key} label={metric.label} help={metric.help} value={formatCount(query.data.counts[metric.key])} testId={`performance-${metric.key}`} />
              ))}
            </dl>
            <dl className="mt-3 grid grid-cols-2 gap-3 sm:grid-cols-3" aria-label="Rates">
              {RATES.map((metric) => (
                <Metric key={metric.key} label={metric.label} help={metric.help} value={query.data.counts[metric.denominator] > 0 ? formatPercent(query.data[metric.key]) : '—'} testId={`performance-${metric.key.replace('_', '-')}`} />
              ))}
            </dl>
            {query.data.counts.skipped > 0 ? <SkippedLine skipped={query.data.skipped} /> : null}
            <QuietHoursLine deferred={query.data.skipped.quiet_hours_deferred} sending={query.data.status === 'sending'} />
            <p className="mt-3 text-xs text-slate-600">
              Click rate = clicks ÷ delivered. Delivery rate = delivered ÷ sent (accepted by the push services). Reach = delivered ÷ targeted.
            </p>
            {recurring ? <RunsTable runs={query.data.runs} timeZone={timeZone} /> : null}
          </>
        )}
      </CardContent>
    </Card>
  );
}

/** Why deliveries were skipped: the subscriber left before the send, or had had the site's frequency cap. */
function SkippedLine({ skipped }: { skipped: NotificationPerformance['skipped'] }) {
  const parts = [
    skipped.inactive ? `${formatCount(skipped.inactive)} had unsubscribed by then` : null,
    skipped.frequency_cap ? `${formatCount(skipped.frequency_cap)} had already had the frequency cap` : null,
  ].filter(Boolean);
  return (
    <p className="mt-3 text-sm text-slate-700" data-testid="skipped-causes">
      <span className="font-medium">Skipped:</span> {parts.join(' · ')}
      {skipped.frequency_cap ? (
        <>
          {' '}
          (
          <Link to="/settings" className="underline hover:no-underline">
            Settings → General
          </Link>
          )
        </>
      ) : null}
    </p>
  );
}

/** Failed deliveries grouped by reason and push service, each with what to do about it. */
function FailuresCard({ performance }: { performance: NotificationPerformance }) {
  const grouped = performance.failures.reduce((sum, group) => sum + group.count, 0);
  const unexplained = Math.max(0, performance.counts.failed - grouped);
  return (
    <Card>
      <CardHeader>
        <CardTitle>Why deliveries failed</CardTitle>
      </CardHeader>
      <CardContent>
        <ul className="flex flex-col gap-3" aria-label="Failure reasons">
          {performance.failures.map((group) => (
            <li key={`${group.reason}-${group.push_service}`} className="rounded-lg border border-red-200 bg-red-50/60 p-3" data-testid="failure-group">
              <p className="text-sm font-semibold text-red-900">
                <span className="tabular-nums">{formatCount(group.count)}</span> · {REASON_LABELS[group.reason]} · {PUSH_SERVICE_LABELS[group.push_service]}
              </p>
              <p className="mt-1 text-sm text-slate-800">{nextStep(group.reason, group.push_service)}</p>
              {group.sample_error ? (
                <p className="mt-1 font-mono text-xs break-all text-slate-600">
                  <span className="font-sans font-medium">Example: </span>
                  {group.sample_error}
                </p>
              ) : null}
            </li>
          ))}
        </ul>
        {unexplained > 0 ? (
          <p className="mt-3 text-xs text-slate-600">
            {formatCount(unexplained)} {unexplained === 1 ? 'failure was' : 'failures were'} recorded before Herald kept reasons.
          </p>
        ) : null}
      </CardContent>
    </Card>
  );
}

/** Live while a send retries: why deliveries wait, attempt n of N, and when the next try is. */
function RetryingNotice({ groups, timeZone }: { groups: NotificationPerformance['retrying']; timeZone: string }) {
  return (
    <div className="rounded-lg border border-amber-200 bg-amber-50 p-3" role="status" data-testid="retrying">
      <p className="flex items-center gap-1.5 text-sm font-semibold text-amber-900">
        <RefreshCw className="size-4" aria-hidden="true" /> Waiting to try again
      </p>
      <ul className="mt-2 flex flex-col gap-2">
        {groups.map((group) => (
          <li key={`${group.reason}-${group.push_service}`} className="text-sm text-slate-800">
            <span className="font-medium">
              {formatCount(group.count)} · {REASON_LABELS[group.reason]} · {PUSH_SERVICE_LABELS[group.push_service]}
            </span>
            : attempt {group.attempt} of {group.max_attempts}
            {group.next_attempt_at ? (
              <>
                , next try <DateTime value={group.next_attempt_at} timeZone={timeZone} />
              </>
            ) : null}
            . {nextStep(group.reason, group.push_service)}
          </li>
        ))}
      </ul>
    </div>
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
            <th scope="col" className="px-3 py-2 text-right font-semibold">Targeted</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Sent</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Delivered</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Clicked</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Failed</th>
            <th scope="col" className="px-3 py-2 text-right font-semibold">Expired</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-200">
          {runs.map((run) => (
            <tr key={run.id} data-testid="performance-run">
              <th scope="row" className="px-3 py-2 font-normal whitespace-nowrap">
                <DateTime value={run.started_at ?? run.due_at} timeZone={timeZone} />
              </th>
              <td className="px-3 py-2">
                <span>{run.status === 'completed_with_errors' ? 'Completed with errors' : run.status.charAt(0).toUpperCase() + run.status.slice(1)}</span>
                {run.last_error ? <span className="block text-xs text-red-700">{run.last_error}</span> : null}
              </td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.counts.targeted)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.counts.sent)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.counts.delivered)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.counts.clicked)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.counts.failed)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(run.counts.expired)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
