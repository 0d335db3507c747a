import { Bell, TrendingUp } from 'lucide-react';
import { DEMO_METRICS, DEMO_WEEK } from '../landing-content';

/** A picture of the dashboard drawn with demo figures (spec §2: "sample dashboard mock-up with static demo figures"). */
export function DashboardMockup() {
  const maxClicks = Math.max(...DEMO_WEEK.map((d) => d.clicks));
  return (
    <figure className="relative mx-auto w-full max-w-5xl">
      <div className="overflow-hidden rounded-2xl border border-slate-200 bg-white shadow-2xl shadow-indigo-900/10">
        <div className="flex items-center gap-2 border-b border-slate-200 bg-slate-50 px-4 py-3" aria-hidden="true">
          <span className="size-3 rounded-full bg-red-300" />
          <span className="size-3 rounded-full bg-amber-300" />
          <span className="size-3 rounded-full bg-emerald-300" />
          <span className="ml-3 truncate rounded-md bg-white px-3 py-1 text-xs text-slate-600 ring-1 ring-slate-200">herald.example.com/dashboard</span>
        </div>
        <div className="grid gap-4 p-4 sm:p-6">
          <dl className="grid grid-cols-2 gap-3 lg:grid-cols-4">
            {DEMO_METRICS.map((metric) => (
              <div key={metric.label} className="rounded-xl border border-slate-200 p-3 sm:p-4">
                <dt className="text-xs font-medium text-slate-600">{metric.label}</dt>
                <dd className="mt-1 text-lg font-semibold text-slate-900 sm:text-2xl">{metric.value}</dd>
                <dd className="mt-1 inline-flex items-center gap-1 text-xs font-medium text-emerald-700">
                  <TrendingUp className="size-3" aria-hidden="true" />
                  {metric.change}
                </dd>
              </div>
            ))}
          </dl>
          <div className="grid gap-4 md:grid-cols-5">
            <div className="rounded-xl border border-slate-200 p-4 md:col-span-3">
              <p className="text-sm font-semibold text-slate-900">Weekly Engagement</p>
              <ul className="mt-4 flex h-32 items-end gap-2 sm:gap-3">
                {DEMO_WEEK.map((day) => (
                  <li key={day.day} className="flex h-full flex-1 flex-col items-center justify-end gap-1">
                    <span className="w-full rounded-t-md bg-indigo-500" style={{ height: `${(day.clicks / maxClicks) * 100}%` }} />
                    <span className="text-[11px] text-slate-600">
                      {day.day}
                      <span className="sr-only">: {day.clicks} clicks</span>
                    </span>
                  </li>
                ))}
              </ul>
            </div>
            <div className="rounded-xl border border-slate-200 p-4 md:col-span-2">
              <p className="text-sm font-semibold text-slate-900">Recent Notifications</p>
              <ul className="mt-3 flex flex-col gap-3">
                {[
                  { title: 'Summer sale starts now', ctr: '14.2% CTR' },
                  { title: 'New article: 10 tips for…', ctr: '11.7% CTR' },
                  { title: 'Back in stock: Classic tee', ctr: '9.4% CTR' },
                ].map((item) => (
                  <li key={item.title} className="flex items-center gap-3">
                    <span className="flex size-8 shrink-0 items-center justify-center rounded-lg bg-indigo-50 text-indigo-700" aria-hidden="true">
                      <Bell className="size-4" />
                    </span>
                    <span className="min-w-0 flex-1 truncate text-sm text-slate-800">{item.title}</span>
                    <span className="shrink-0 text-xs font-medium text-slate-600">{item.ctr}</span>
                  </li>
                ))}
              </ul>
            </div>
          </div>
        </div>
      </div>
      <figcaption className="mt-3 text-center text-xs text-slate-600">Sample dashboard with demo figures.</figcaption>
    </figure>
  );
}
