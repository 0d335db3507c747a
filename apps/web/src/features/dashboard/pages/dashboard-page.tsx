import type { DashboardData, Site } from '@herald/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { BarChart3, Bell, Coins, MousePointerClick, RefreshCw, Users } from 'lucide-react';
import { Alert, Button, PageHeader, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { useCurrentSite } from '../../../lib/sites-store';
import { dashboardRefreshKeys, useDashboardQuery } from '../api';
import { DeliveryHealth } from '../components/delivery-health';
import { MetricCard } from '../components/metric-card';
import { EngagementChart } from '../components/engagement-chart';
import { PerformanceChart } from '../components/performance-chart';
import { RecentNotifications } from '../components/recent-notifications';
import { RecurringPanel } from '../components/recurring-panel';
import { WelcomeCampaignsPanel } from '../components/welcome-campaigns-panel';
import { formatCount, formatMoney, formatRate } from '../dashboard-format';
import { sampleChart, sampleEngagement } from '../sample-data';
import { NoSiteSelected } from '../../../components/no-site-selected';
import { SetupChecklist } from '../../onboarding/components/setup-checklist';

function Loading() {
  return (
    <div className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
      <Spinner /> Loading analytics...
    </div>
  );
}

/** Spec §2 Dashboard. */
export function DashboardPage() {
  const { currentSite, loaded } = useCurrentSite();
  if (!currentSite) {
    return (
      <>
        <PageHeader title="Dashboard" />
        <NoSiteSelected loaded={loaded} icon={<BarChart3 className="size-6" />} description="Create or select a site to view analytics" loading={<Loading />} />
      </>
    );
  }
  // key: another site starts from its own loading state.
  return <SiteDashboard key={currentSite.id} site={currentSite} />;
}

/** "9:41 AM": when the figures on screen were fetched, in the site's timezone. */
function fetchedAtText(updatedAt: number, timeZone: string): string {
  const options: Intl.DateTimeFormatOptions = { timeStyle: 'short' };
  try {
    return new Intl.DateTimeFormat('en-US', { ...options, timeZone }).format(updatedAt);
  } catch {
    return new Intl.DateTimeFormat('en-US', options).format(updatedAt);
  }
}

const updatedAtText = (updatedAt: number, timeZone: string) => `Updated ${fetchedAtText(updatedAt, timeZone)}`;

/**
 * Figures stay fresh for 5 minutes (spec §9); deliveries and clicks keep
 * arriving after a send, so the dashboard says when its figures are from and
 * fetches them again (with its panels) on request.
 */
function RefreshControl({ site, updatedAt, fetching }: { site: Site; updatedAt: number; fetching: boolean }) {
  const queryClient = useQueryClient();
  const refresh = () => {
    for (const queryKey of dashboardRefreshKeys(site.id)) void queryClient.invalidateQueries({ queryKey });
  };
  return (
    <div className="flex items-center gap-3">
      {updatedAt ? (
        <p className="text-xs text-slate-600" data-testid="dashboard-updated-at">
          {updatedAtText(updatedAt, site.settings.timezone)}
        </p>
      ) : null}
      <Button variant="secondary" size="sm" onClick={refresh} loading={fetching} icon={<RefreshCw className="size-4" aria-hidden="true" />}>
        Refresh
      </Button>
    </div>
  );
}

function SiteDashboard({ site }: { site: Site }) {
  const query = useDashboardQuery(site.id);
  return (
    <>
      <PageHeader
        title="Dashboard"
        description={query.data ? `${site.name}: the last ${query.data.period.days} days, in ${query.data.period.timezone} time.` : site.name}
        actions={query.data ? <RefreshControl site={site} updatedAt={query.dataUpdatedAt} fetching={query.isFetching} /> : undefined}
      />
      <div className="mb-6 empty:hidden">
        <SetupChecklist site={site} placement="dashboard" />
      </div>
      {query.isPending ? (
        <Loading />
      ) : query.data ? (
        <>
          {/* A Refresh that failed (Herald unreachable, say) keeps the figures on screen and says they are not current. */}
          {query.isError ? (
            <Alert tone="warning" title="Could not refresh" className="mb-6">
              <div className="flex flex-wrap items-center gap-3">
                <span>
                  {errorMessage(query.error, 'Herald could not be reached.')} The figures below are from {fetchedAtText(query.dataUpdatedAt, site.settings.timezone)}.
                </span>
                <Button variant="secondary" size="sm" onClick={() => void query.refetch()}>
                  Try again
                </Button>
              </div>
            </Alert>
          ) : null}
          <DashboardContent site={site} data={query.data} />
        </>
      ) : (
        <Alert tone="error" title="Could not load analytics">
          <div className="flex flex-wrap items-center gap-3">
            {errorMessage(query.error, 'Please try again.')}
            <Button variant="secondary" size="sm" onClick={() => void query.refetch()}>
              Try again
            </Button>
          </div>
        </Alert>
      )}
    </>
  );
}

function DashboardContent({ site, data }: { site: Site; data: DashboardData }) {
  const { metrics, period } = data;
  const comparedWith = `previous ${period.days} ${period.days === 1 ? 'day' : 'days'}`;
  const sample = !data.hasData;
  return (
    <div className="flex flex-col gap-6">
      <section aria-labelledby="dashboard-metrics">
        <h2 id="dashboard-metrics" className="sr-only">
          Key figures
        </h2>
        <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 xl:grid-cols-4">
          <MetricCard
            title="Total Subscribers"
            help={DASHBOARD_HELP.totalSubscribers}
            value={formatCount(metrics.totalSubscribers.value)}
            metric={metrics.totalSubscribers}
            comparedWith={comparedWith}
            icon={<Users className="size-5" />}
          />
          <MetricCard
            title="Notifications Sent"
            help={DASHBOARD_HELP.notificationsSent}
            value={formatCount(metrics.notificationsSent.value)}
            metric={metrics.notificationsSent}
            comparedWith={comparedWith}
            icon={<Bell className="size-5" />}
          />
          <MetricCard
            title="Click Rate"
            help={DASHBOARD_HELP.clickRate}
            value={formatRate(metrics.clickRate.value)}
            metric={metrics.clickRate}
            comparedWith={comparedWith}
            icon={<MousePointerClick className="size-5" />}
          />
          <MetricCard
            title="Value Generated"
            help={DASHBOARD_HELP.valueGenerated}
            value={formatMoney(metrics.valueGenerated.value, metrics.valueGenerated.currency)}
            metric={metrics.valueGenerated}
            comparedWith={comparedWith}
            icon={<Coins className="size-5" />}
          />
        </div>
      </section>

      <div className="grid grid-cols-1 gap-6 lg:grid-cols-5">
        <PerformanceChart days={sample ? sampleChart(data.chart) : data.chart} sample={sample} className="min-w-0 lg:col-span-3" />
        <EngagementChart days={sample ? sampleEngagement(data.engagement) : data.engagement} sample={sample} className="min-w-0 lg:col-span-2" />
      </div>

      <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-2">
        <RecentNotifications items={data.recentNotifications} timeZone={period.timezone} className="min-w-0" />
        <div className="flex min-w-0 flex-col gap-6">
          <RecurringPanel siteId={site.id} />
          <WelcomeCampaignsPanel siteId={site.id} timeZone={period.timezone} />
        </div>
      </div>

      <section aria-labelledby="delivery-health">
        <DeliveryHealth siteId={site.id} />
      </section>
    </div>
  );
}
