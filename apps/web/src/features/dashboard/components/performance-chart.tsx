import type { ChartDay } from '@herald/contracts';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip as ChartTooltip, XAxis, YAxis } from 'recharts';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { formatCount, formatDay } from '../dashboard-format';
import { ChartCard } from './chart-card';

// Colours with at least 3:1 contrast against white (WCAG non-text contrast).
const SERIES = [
  { key: 'sent', name: 'Sent', color: '#4f46e5' },
  { key: 'delivered', name: 'Delivered', color: '#059669' },
  { key: 'clicked', name: 'Clicked', color: '#d97706' },
] as const;

/** Keeps legend and tooltip in the order sent, delivered, clicked (Recharts sorts alphabetically by default). */
const seriesOrder = (item: { dataKey?: unknown }) => SERIES.findIndex((series) => series.key === item.dataKey);

/** Spec §2 Dashboard: line chart of the last 7 days (sent, delivered, clicked). */
export function PerformanceChart({ days, sample, className }: { days: ChartDay[]; sample: boolean; className?: string }) {
  const title = `Last ${days.length} Days`;
  const data = days.map((day) => ({ ...day, label: formatDay(day.date), fullDate: formatDay(day.date, 'long') }));
  return (
    <ChartCard
      title={title}
      help={DASHBOARD_HELP.performanceChart}
      sample={sample}
      className={className}
      table={
        <div className="sr-only">
        <table>
          <caption>
            Sent, delivered and clicked notifications per day{sample ? ' (sample data)' : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {SERIES.map((series) => (
                <th key={series.key} scope="col">
                  {series.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.map((day) => (
              <tr key={day.date}>
                <th scope="row">{day.fullDate}</th>
                {SERIES.map((series) => (
                  <td key={series.key}>{formatCount(day[series.key])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      }
    >
      <ResponsiveContainer width="100%" height={280}>
        <LineChart accessibilityLayer={false} data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="#e2e8f0" strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="label" tick={{ fill: '#475569', fontSize: 12 }} tickLine={false} axisLine={{ stroke: '#cbd5e1' }} interval="preserveStartEnd" minTickGap={8} />
          <YAxis allowDecimals={false} tick={{ fill: '#475569', fontSize: 12 }} tickLine={false} axisLine={false} width={48} tickFormatter={formatCount} />
          <ChartTooltip
            formatter={(value) => formatCount(Number(value))}
            labelFormatter={(_label, payload) => String(payload[0]?.payload.fullDate ?? _label)}
            contentStyle={{ borderRadius: 8, borderColor: '#cbd5e1', fontSize: 12 }}
            itemStyle={{ color: '#0f172a' }}
            itemSorter={seriesOrder}
          />
          <Legend itemSorter={seriesOrder} iconType="plainline" wrapperStyle={{ fontSize: 12, color: '#334155' }} />
          {SERIES.map((series) => (
            <Line
              key={series.key}
              type="monotone"
              dataKey={series.key}
              name={series.name}
              stroke={series.color}
              strokeWidth={2}
              strokeDasharray={sample ? '6 4' : undefined}
              dot={{ r: 3 }}
              activeDot={{ r: 5 }}
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}
