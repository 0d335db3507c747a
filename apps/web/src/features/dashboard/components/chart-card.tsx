import type { ReactNode } from 'react';
import { Badge, Card, CardContent, CardHeader, CardTitle, Tooltip } from '../../../components/ui';

interface ChartCardProps {
  title: string;
  help: string;
  /** True when the chart shows placeholder figures (the site has sent nothing yet). */
  sample: boolean;
  children: ReactNode;
  /** The same figures as a table for screen readers (a chart is a picture). */
  table: ReactNode;
  className?: string;
}

/** A dashboard chart in a card; sample figures are labelled as such, never passed off as real. */
export function ChartCard({ title, help, sample, children, table, className }: ChartCardProps) {
  return (
    <Card className={className}>
      <CardHeader className="flex-row flex-wrap items-center justify-between gap-2">
        <div className="flex items-center gap-1">
          <CardTitle>{title}</CardTitle>
          <Tooltip content={help} label={`About ${title}`} />
        </div>
        {sample ? <Badge tone="warning">Sample data</Badge> : null}
      </CardHeader>
      <CardContent className="px-2 sm:px-4">
        {sample ? (
          <p className="mb-3 px-3 text-xs text-slate-600 sm:px-2">Nothing has been sent from this site yet. This sample shows what the chart will look like; your own figures replace it after your first notification.</p>
        ) : null}
        <div aria-hidden="true">{children}</div>
        {table}
      </CardContent>
    </Card>
  );
}
