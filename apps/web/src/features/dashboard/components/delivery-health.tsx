import type { DeliveryHealthData, DeliveryHealthService, MedianAcceptTime } from '@herald/contracts';
import { Brush } from 'lucide-react';
import { useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip as ChartTooltip, XAxis, YAxis } from 'recharts';
import { RoleGatedButton } from '../../../components/role-gate';
import { PUSH_SERVICE_LABELS, REASON_LABELS } from '../../../components/send-outcome';
import { Alert, Card, CardContent, CardHeader, CardTitle, Spinner, ToggleGroup, Tooltip } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { useDeliveryHealthQuery, useStaleCleanupMutation, useStaleSubscribersQuery } from '../api';
import { formatCount, formatDay, pluralize } from '../dashboard-format';

const RANGES = [
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
] as const;

/** "within 2 s", "over 24 h": the median read from the server's latency buckets. */
function medianText(median: MedianAcceptTime): string {
  if (!median) return '—';
  const ms = 'within_ms' in median ? median.within_ms : median.over_ms;
  const text = ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`;
  return 'within_ms' in median ? `within ${text}` : `over ${text}`;
}

function ServiceRow({ service }: { service: DeliveryHealthService }) {
  const total = service.accepted + service.failed + service.expired;
  return (
    <li className="flex flex-col gap-2 py-3" data-testid={`health-${service.push_service}`}>
      <p className="text-sm font-semibold text-slate-900">{PUSH_SERVICE_LABELS[service.push_service]}</p>
      <dl className="grid grid-cols-2 gap-x-4 gap-y-2 text-xs text-slate-600 sm:grid-cols-4 [&>div]:flex-col [&>div]:gap-0.5 [&_dd]:text-sm">
        <div className="flex gap-1">
          <dt>Accepted</dt>
          <dd className="font-semibold text-slate-900 tabular-nums" data-testid="health-accepted">
            {formatCount(service.accepted)}
          </dd>
        </div>
        <div className="flex gap-1">
          <dt>Failed</dt>
          <dd className={service.failed ? 'font-semibold text-red-700 tabular-nums' : 'font-semibold text-slate-900 tabular-nums'} data-testid="health-failed">
            {formatCount(service.failed)}
          </dd>
        </div>
        <div className="flex gap-1">
          <dt>Expired</dt>
          <dd className="font-semibold text-slate-900 tabular-nums" data-testid="health-expired">
            {formatCount(service.expired)}
          </dd>
        </div>
        <div className="flex gap-1">
          <dt>Time to accept (median)</dt>
          <dd className="font-semibold text-slate-900 tabular-nums" data-testid="health-median">
            {medianText(service.median_accept)}
          </dd>
        </div>
      </dl>
      {service.failures.length ? (
        <ul className="flex flex-wrap gap-2" aria-label={`Failures at ${PUSH_SERVICE_LABELS[service.push_service]}`}>
          {service.failures.map((failure) => (
            <li key={failure.reason} className="rounded-full bg-red-50 px-2 py-0.5 text-xs text-red-800 ring-1 ring-red-200 ring-inset">
              {formatCount(failure.count)} · {REASON_LABELS[failure.reason]}
            </li>
          ))}
        </ul>
      ) : null}
      <div className="flex h-1.5 overflow-hidden rounded-full bg-slate-200" aria-hidden="true">
        {total > 0 ? (
          <>
            <div className="bg-emerald-600" style={{ width: `${(service.accepted / total) * 100}%` }} />
            <div className="bg-red-600" style={{ width: `${(service.failed / total) * 100}%` }} />
            <div className="bg-amber-500" style={{ width: `${(service.expired / total) * 100}%` }} />
          </>
        ) : null}
      </div>
    </li>
  );
}

function ChurnChart({ data }: { data: DeliveryHealthData }) {
  const rows = data.churn.map((day) => ({ ...day, label: formatDay(day.date), other: day.lost - day.lost_at_push_service }));
  return (
    <div>
      <p className="mb-2 text-sm font-semibold text-slate-900">Subscriptions gained and lost per day</p>
      <p className="mb-2 text-xs text-slate-600" data-testid="churn-totals">
        {pluralize(data.churn_totals.new, 'new subscription')} · {pluralize(data.churn_totals.lost, 'lost', 'lost')} (
        {formatCount(data.churn_totals.lost_at_push_service)} expired at the push service, {formatCount(data.churn_totals.lost - data.churn_totals.lost_at_push_service)}{' '}
        unsubscribed or removed)
      </p>
      <div aria-hidden="true">
        <ResponsiveContainer width="100%" height={180}>
          <BarChart accessibilityLayer={false} data={rows} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid stroke="#e2e8f0" strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="label" tick={{ fill: '#475569', fontSize: 11 }} tickLine={false} axisLine={{ stroke: '#cbd5e1' }} minTickGap={12} />
            <YAxis allowDecimals={false} tick={{ fill: '#475569', fontSize: 11 }} tickLine={false} axisLine={false} width={40} tickFormatter={formatCount} />
            <ChartTooltip contentStyle={{ borderRadius: 8, borderColor: '#cbd5e1', fontSize: 12 }} itemStyle={{ color: '#0f172a' }} cursor={{ fill: '#eef2ff' }} />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar dataKey="new" name="New" fill="#059669" isAnimationActive={false} maxBarSize={24} />
            <Bar dataKey="lost_at_push_service" name="Expired (404/410)" stackId="lost" fill="#f59e0b" isAnimationActive={false} maxBarSize={24} />
            <Bar dataKey="other" name="Unsubscribed" stackId="lost" fill="#dc2626" isAnimationActive={false} maxBarSize={24} />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <div className="sr-only">
      <table>
        <caption>Subscriptions gained and lost per day</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">New</th>
            <th scope="col">Lost</th>
            <th scope="col">Of which expired at the push service</th>
          </tr>
        </thead>
        <tbody>
          {data.churn.map((day) => (
            <tr key={day.date}>
              <th scope="row">{formatDay(day.date, 'long')}</th>
              <td>{formatCount(day.new)}</td>
              <td>{formatCount(day.lost)}</td>
              <td>{formatCount(day.lost_at_push_service)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </div>
  );
}

/** Stale subscribers (spec §9 best practice: clean inactive subscribers at 90+ days) and the one-click clean-up. */
function StaleSubscribers({ siteId }: { siteId: string }) {
  const stale = useStaleSubscribersQuery(siteId);
  const cleanup = useStaleCleanupMutation(siteId);
  if (stale.isPending) return <p className="text-sm text-slate-600">Counting stale subscribers...</p>;
  if (stale.isError) return <p className="text-sm text-red-700">Could not count stale subscribers: {errorMessage(stale.error, 'please try again')}.</p>;
  const { stale: count, active, days } = stale.data;
  const clean = () => {
    if (!confirmAction(`Deactivate ${pluralize(count, 'stale subscriber')}? They will no longer receive notifications.`)) return;
    cleanup.mutate(undefined, {
      onSuccess: (result) =>
        notify(
          `Deactivated ${pluralize(result.deactivated, 'stale subscriber')}. Active subscribers: ${formatCount(result.before.active)} before, ${formatCount(result.after.active)} now.`,
        ),
      onError: (error) => notify(errorMessage(error, 'Failed to clean up stale subscribers')),
    });
  };
  return (
    <div className="flex flex-col gap-2 rounded-lg border border-slate-200 bg-slate-50 p-3 sm:flex-row sm:items-center sm:justify-between" data-testid="stale-subscribers">
      <p className="flex items-center gap-1 text-sm text-slate-800">
        <span>
          <span className="font-semibold tabular-nums" data-testid="stale-count">
            {formatCount(count)}
          </span>{' '}
          of {formatCount(active)} active subscribers got nothing delivered in {days}+ days.
        </span>
        <Tooltip label="About stale subscribers" content={DASHBOARD_HELP.staleSubscribers} />
      </p>
      <RoleGatedButton
        needed="admin"
        action="remove subscribers"
        size="sm"
        variant="secondary"
        disabled={count === 0}
        loading={cleanup.isPending}
        onClick={clean}
        icon={<Brush className="size-4" aria-hidden="true" />}
      >
        Clean up
      </RoleGatedButton>
    </div>
  );
}

/**
 * The dashboard's Delivery section (issue 11): for the last 7 or 30 days, per
 * push service, what was accepted, what failed and why, what expired, and how
 * long acceptance took; subscriptions gained against those lost; stale
 * subscribers with their clean-up.
 */
export function DeliveryHealth({ siteId, className }: { siteId: string; className?: string }) {
  const [days, setDays] = useState<'7' | '30'>('7');
  const query = useDeliveryHealthQuery(siteId, Number(days));
  return (
    <Card className={className}>
      <CardHeader className="flex-row flex-wrap items-center justify-between gap-2">
        <div className="flex items-center gap-1">
          <CardTitle id="delivery-health">Delivery</CardTitle>
          <Tooltip content={DASHBOARD_HELP.deliveryHealth} label="About Delivery" />
        </div>
        <ToggleGroup size="sm" label="Delivery period" items={RANGES} value={days} onValueChange={setDays} />
      </CardHeader>
      <CardContent className="flex flex-col gap-5">
        {query.isPending ? (
          <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
            <Spinner /> Loading delivery...
          </p>
        ) : query.isError && !query.data ? (
          <Alert tone="error" title="Could not load delivery figures">
            <p>{errorMessage(query.error, 'Please try again.')}</p>
          </Alert>
        ) : (
          <>
            {query.data.services.length === 0 ? (
              <p className="text-sm text-slate-600">Nothing was sent in the last {query.data.days} days.</p>
            ) : (
              <ul className="divide-y divide-slate-200" aria-label="By push service">
                {query.data.services.map((service) => (
                  <ServiceRow key={service.push_service} service={service} />
                ))}
              </ul>
            )}
            <ChurnChart data={query.data} />
          </>
        )}
        <StaleSubscribers siteId={siteId} />
      </CardContent>
    </Card>
  );
}
