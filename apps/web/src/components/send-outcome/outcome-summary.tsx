import type { OutcomeCounts } from '@herald/contracts';
import { cn } from '../../lib/class-names';
import { formatCount, shareText } from './outcome-words';

const rate = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10000) / 100 : 0);
const percent = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/**
 * What a finished (or running) send did, in one line of figures: sent
 * (accepted), delivered, click rate (clicks ÷ delivered, spec §9) and
 * failures with their share of the audience. The same figures as the
 * notification page and the API's `counts`.
 */
export function OutcomeSummary({ counts, className }: { counts: OutcomeCounts; className?: string }) {
  const items = [
    { key: 'sent', label: 'Sent', value: formatCount(counts.sent), title: 'Accepted by the push services' },
    { key: 'delivered', label: 'Delivered', value: formatCount(counts.delivered), title: 'Shown on the device (delivered beacons)' },
    // Nothing delivered: no rate to give (the notification's page says "—" too).
    { key: 'click-rate', label: 'Click rate', value: counts.delivered > 0 ? `${percent.format(rate(counts.clicked, counts.delivered))}%` : '—', title: 'Clicks ÷ delivered' },
    {
      key: 'failed',
      label: 'Failed',
      value: counts.failed ? `${formatCount(counts.failed)} (${shareText(counts.failed, counts.targeted)})` : '0',
      title: 'Not accepted and given up, of everyone targeted (expired subscriptions are counted apart)',
    },
  ];
  return (
    <dl className={cn('flex flex-wrap gap-x-5 gap-y-1 text-xs text-slate-600', className)} data-testid="outcome-summary">
      {items.map((item) => (
        <div key={item.key} className="flex gap-1" title={item.title}>
          <dt>{item.label}</dt>
          <dd className={cn('font-semibold tabular-nums', item.key === 'failed' && counts.failed > 0 ? 'text-red-700' : 'text-slate-900')} data-testid={`outcome-${item.key}`}>
            {item.value}
          </dd>
        </div>
      ))}
      {counts.expired ? (
        <div className="flex gap-1" title="The push service said these subscriptions no longer exist (404/410); they were deactivated">
          <dt>Expired</dt>
          <dd className="font-semibold text-slate-900 tabular-nums" data-testid="outcome-expired">
            {formatCount(counts.expired)}
          </dd>
        </div>
      ) : null}
    </dl>
  );
}
