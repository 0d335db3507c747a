import type { EngagementDay } from '@herald/contracts';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip as ChartTooltip, XAxis, YAxis } from 'recharts';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { formatCount } from '../dashboard-format';
import { ChartCard } from './chart-card';

const WEEKDAY_FULL_NAMES: Record<EngagementDay['name'], string> = {
  Mon: 'Monday',
  Tue: 'Tuesday',
  Wed: 'Wednesday',
  Thu: 'Thursday',
  Fri: 'Friday',
  Sat: 'Saturday',
  Sun: 'Sunday',
};

/** Spec §2 Dashboard: the Weekly Engagement bar chart, clicks by weekday. */
export function EngagementChart({ days, sample, className }: { days: EngagementDay[]; sample: boolean; className?: string }) {
  return (
    <ChartCard
      title="Weekly Engagement"
      help={DASHBOARD_HELP.weeklyEngagement}
      sample={sample}
      className={className}
      table={
        <div className="sr-only">
        <table>
          <caption>Clicks by day of the week{sample ? ' (sample data)' : ''}</caption>
          <thead>
            <tr>
              <th scope="col">Day of the week</th>
              <th scope="col">Clicks</th>
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.name}>
                <th scope="row">{WEEKDAY_FULL_NAMES[day.name]}</th>
                <td>{formatCount(day.clicks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      }
    >
      <ResponsiveContainer width="100%" height={280}>
        <BarChart accessibilityLayer={false} data={days} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="#e2e8f0" strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="name" tick={{ fill: '#475569', fontSize: 12 }} tickLine={false} axisLine={{ stroke: '#cbd5e1' }} />
          <YAxis allowDecimals={false} tick={{ fill: '#475569', fontSize: 12 }} tickLine={false} axisLine={false} width={48} tickFormatter={formatCount} />
          <ChartTooltip
            formatter={(value) => [formatCount(Number(value)), 'Clicks']}
            labelFormatter={(label) => WEEKDAY_FULL_NAMES[label as EngagementDay['name']] ?? String(label)}
            cursor={{ fill: '#eef2ff' }}
            contentStyle={{ borderRadius: 8, borderColor: '#cbd5e1', fontSize: 12 }}
            itemStyle={{ color: '#0f172a' }}
          />
          <Bar dataKey="clicks" name="Clicks" fill={sample ? '#a5b4fc' : '#4f46e5'} radius={[4, 4, 0, 0]} maxBarSize={48} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}
