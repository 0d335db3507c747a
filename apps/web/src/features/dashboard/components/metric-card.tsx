import type { MetricValue } from '@herald/contracts';
import { Minus, TrendingDown, TrendingUp } from 'lucide-react';
import type { ReactNode } from 'react';
import { Card, Tooltip } from '../../../components/ui';
import { cn } from '../../../lib/class-names';
import { formatChange } from '../dashboard-format';

interface MetricCardProps {
  title: string;
  /** Tooltip help text (lib/help-texts). */
  help: string;
  /** The figure, already formatted. */
  value: string;
  metric: MetricValue;
  /** What the change compares with, e.g. "previous 7 days". */
  comparedWith: string;
  icon: ReactNode;
}

/** Spec §2 Dashboard: a metric card — title with tooltip, value, percent change with an up or down trend, icon. */
export function MetricCard({ title, help, value, metric, comparedWith, icon }: MetricCardProps) {
  const { change } = metric;
  const trend = change === null || change > 0 ? 'up' : change < 0 ? 'down' : 'flat';
  const TrendIcon = trend === 'up' ? TrendingUp : trend === 'down' ? TrendingDown : Minus;
  return (
    <Card className="flex flex-col gap-2 p-4 sm:p-5" data-testid={`metric-${title.toLowerCase().replace(/\s+/g, '-')}`}>
      <div className="flex min-w-0 items-center gap-1">
        <h3 className="text-sm font-medium text-slate-600">{title}</h3>
        <Tooltip content={help} label={`About ${title}`} />
      </div>
      <div className="flex items-center justify-between gap-3">
        <p className="min-w-0 text-2xl font-semibold tracking-tight break-words text-slate-900 tabular-nums" data-testid="metric-value">
          {value}
        </p>
        <span className="flex size-10 shrink-0 items-center justify-center rounded-lg bg-indigo-50 text-indigo-700" aria-hidden="true">
          {icon}
        </span>
      </div>
      <p className="flex flex-wrap items-center gap-x-1.5 gap-y-0.5 text-xs">
        <span
          className={cn(
            'inline-flex items-center gap-1 font-semibold',
            trend === 'up' && 'text-emerald-700',
            trend === 'down' && 'text-red-700',
            trend === 'flat' && 'text-slate-600',
          )}
          data-trend={trend}
        >
          <TrendIcon className="size-3.5" aria-hidden="true" />
          {change === null ? (
            'New'
          ) : (
            <>
              <span className="sr-only">{trend === 'up' ? 'Up ' : trend === 'down' ? 'Down ' : 'No change, '}</span>
              {formatChange(change)}
            </>
          )}
        </span>
        <span className="text-slate-600">{change === null ? `nothing to compare in the ${comparedWith}` : `vs ${comparedWith}`}</span>
      </p>
    </Card>
  );
}
