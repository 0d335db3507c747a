import type { DashboardData, Notification, Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { deferred, fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { recurrenceText } from '../dashboard-format';
import { makeCounts, makeNotification, makeRecent } from '../../../test/notification-fixtures';

const site = makeSite({ id: 'site-1', name: 'Acme Store', settings: { ...makeSite().settings, timezone: 'Asia/Tokyo', valueCurrency: 'EUR' } });

const days = ['2026-05-07', '2026-05-08', '2026-05-09', '2026-05-10', '2026-05-11', '2026-05-12', '2026-05-13'];

function dashboard(overrides: Partial<DashboardData> = {}): DashboardData {
  return {
    period: { days: 7, from: days[0]!, to: days[6]!, previousStart: '2026-04-29T19:00:00.000Z', previousEnd: '2026-05-06T15:00:00.000Z', timezone: 'Asia/Tokyo' },
    metrics: {
      totalSubscribers: { value: 1234, previous: 1000, change: 23.4 },
      notificationsSent: { value: 5000, previous: 6000, change: -16.67 },
      clickRate: { value: 12.5, previous: 12.5, change: 0 },
      valueGenerated: { value: 1234.5, previous: 0, change: null, currency: 'EUR' },
    },
    chart: days.map((date, i) => ({ date, sent: i === 3 ? 600 : 0, delivered: i === 3 ? 540 : 0, clicked: i === 3 ? 61 : 0 })),
    engagement: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((name) => ({ name: name as 'Mon', clicks: name === 'Sun' ? 61 : 0 })),
    recentNotifications: [
      makeRecent({ id: 'n-2', title: 'Summer sale', message: 'Everything 20% off until Sunday', sent_at: '2026-05-10T14:30:00.000Z', click_rate: 12.5, sent_count: 1234 }),
      makeRecent({ id: 'n-1', title: 'New arrivals', message: 'Fresh stock in the shop', sent_at: '2026-05-01T12:00:00.000Z', click_rate: 0, sent_count: 1 }),
    ],
    hasData: true,
    ...overrides,
  };
}

function recurring(id: string, title: string, intervalType: 'DAILY' | 'WEEKLY' | 'MONTHLY', intervalValue: number, isActive: boolean): Notification {
  return makeNotification({
    id,
    site_id: 'site-1',
    type: 'RECURRING',
    title,
    message: 'Our picks of the week',
    destination_url: 'https://shop.acme.example/picks',
    status: 'scheduled',
    created_at: '2026-05-01T00:00:00.000Z',
    updated_at: '2026-05-01T00:00:00.000Z',
    recurringSchedule: { intervalType, intervalValue, startDate: '2026-05-01T09:00:00', endDate: null, isActive, nextRunAt: null },
  });
}

type Routes = Parameters<typeof mockApi>[0];

function setUp(options: { sites?: Site[]; data?: DashboardData; routes?: Routes } = {}) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: options.sites ?? [site] }),
    'GET /api/sites/site-1/analytics/dashboard': ok(options.data ?? dashboard()),
    'GET /api/sites/site-1/notifications': ok({ notifications: [], counts: { all: 0 } }),
    'GET /api/sites/site-1/welcome-campaigns': fail(404, 'Route GET /api/sites/site-1/welcome-campaigns not found'),
    ...options.routes,
  });
}

const card = (title: string) => screen.getByRole('heading', { name: title, level: 3 }).closest('div.rounded-xl') as HTMLElement;
const panel = (title: string) => screen.getByRole('heading', { name: title, level: 2 }).closest('div.rounded-xl') as HTMLElement;

describe('dashboard page (spec §2 Dashboard)', () => {
  // The route loads the page lazily (with Recharts); load it once up front so a busy machine does not time out the first test.
  beforeAll(async () => {
    await import('./dashboard-page');
  }, 30_000);

  it('without a site: "No Site Selected"', async () => {
    setUp({ sites: [] });
    renderApp('/dashboard');
    expect(await screen.findByRole('heading', { name: 'No Site Selected' })).toBeInTheDocument();
    expect(screen.getByText('Create or select a site to view analytics')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'New Site' })).toHaveAttribute('href', '/sites/new');
  });

  it('says "Loading analytics..." until the figures arrive, then asks for the last 7 days', async () => {
    const pending = deferred();
    const api = setUp({ routes: { 'GET /api/sites/site-1/analytics/dashboard': () => pending.promise } });
    renderApp('/dashboard');
    expect(await screen.findByText('Loading analytics...')).toBeInTheDocument();
    pending.resolve(ok(dashboard()));
    expect(await screen.findByRole('heading', { name: 'Total Subscribers' })).toBeInTheDocument();
    expect(screen.queryByText('Loading analytics...')).not.toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-1/analytics/dashboard')[0]!.url.searchParams.get('days')).toBe('7');
  });

  it('shows the four metric cards with values, the change from the API and its trend', async () => {
    setUp();
    const { user } = renderApp('/dashboard');
    await screen.findByRole('heading', { name: 'Total Subscribers' });

    expect(within(card('Total Subscribers')).getByText('1,234')).toBeInTheDocument();
    expect(within(card('Total Subscribers')).getByText('+23.4%').closest('[data-trend]')).toHaveAttribute('data-trend', 'up');
    expect(within(card('Total Subscribers')).getByText('vs previous 7 days')).toBeInTheDocument();

    expect(within(card('Notifications Sent')).getByText('5,000')).toBeInTheDocument();
    expect(within(card('Notifications Sent')).getByText('-16.7%').closest('[data-trend]')).toHaveAttribute('data-trend', 'down');

    expect(within(card('Click Rate')).getByText('12.5%')).toBeInTheDocument();
    expect(within(card('Click Rate')).getByText('0%').closest('[data-trend]')).toHaveAttribute('data-trend', 'flat');

    // In the site's currency; no previous value, so no invented percentage.
    expect(within(card('Value Generated')).getByText('€1,234.50')).toBeInTheDocument();
    expect(within(card('Value Generated')).getByText('New')).toBeInTheDocument();
    expect(within(card('Value Generated')).getByText('nothing to compare in the previous 7 days')).toBeInTheDocument();

    // Every card explains itself in a tooltip.
    for (const [title, help] of [
      ['Total Subscribers', DASHBOARD_HELP.totalSubscribers],
      ['Notifications Sent', DASHBOARD_HELP.notificationsSent],
      ['Click Rate', DASHBOARD_HELP.clickRate],
      ['Value Generated', DASHBOARD_HELP.valueGenerated],
    ] as const) {
      const trigger = screen.getByRole('button', { name: `About ${title}` });
      await user.hover(trigger);
      expect(document.getElementById(trigger.getAttribute('aria-describedby')!)).toBeVisible();
      expect(trigger).toHaveAccessibleDescription(help);
      await user.unhover(trigger);
    }
  });

  it('charts the real figures when the site has data, with no sample marking', async () => {
    setUp();
    renderApp('/dashboard');
    const chart = await screen.findByRole('table', { name: 'Sent, delivered and clicked notifications per day' });
    const rows = within(chart).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(7);
    expect(rows[3]).toHaveTextContent('Sunday, May 10, 2026600540');
    expect(rows[0]).toHaveTextContent('Thursday, May 7, 2026000');
    const weekly = screen.getByRole('table', { name: 'Clicks by day of the week' });
    expect(within(weekly).getAllByRole('row').slice(1).map((r) => r.textContent)).toEqual(['Monday0', 'Tuesday0', 'Wednesday0', 'Thursday0', 'Friday0', 'Saturday0', 'Sunday61']);
    expect(screen.queryByText('Sample data')).not.toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Last 7 Days' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Weekly Engagement' })).toBeInTheDocument();
  });

  it('shows clearly marked sample data only when the server has none', async () => {
    setUp({ data: dashboard({ hasData: false, recentNotifications: [] }) });
    renderApp('/dashboard');
    await screen.findByRole('heading', { name: 'Last 7 Days' });
    expect(screen.getAllByText('Sample data')).toHaveLength(2);
    expect(within(panel('Last 7 Days')).getByText('Sample data')).toBeInTheDocument();
    expect(within(panel('Weekly Engagement')).getByText('Sample data')).toBeInTheDocument();
    const chart = screen.getByRole('table', { name: 'Sent, delivered and clicked notifications per day (sample data)' });
    // Sample figures on the real dates, never the server's zeros passed off as data.
    expect(within(chart).getAllByRole('row')[1]).toHaveTextContent('Thursday, May 7, 2026');
    expect(within(chart).getAllByRole('row')[1]).not.toHaveTextContent('Thursday, May 7, 2026000');
    expect(screen.getByRole('table', { name: 'Clicks by day of the week (sample data)' })).toBeInTheDocument();
  });

  it('lists recent notifications with CTR, sent count and date, or the empty text', async () => {
    setUp();
    renderApp('/dashboard');
    const list = within(await screen.findByRole('heading', { name: 'Recent Notifications' }).then((h) => h.closest('div.rounded-xl') as HTMLElement));
    const items = list.getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent('Summer sale');
    expect(items[0]).toHaveTextContent('Everything 20% off until Sunday');
    expect(items[0]).toHaveTextContent('12.5% CTR');
    expect(items[0]).toHaveTextContent('1,234 sent');
    // Sent at 14:30 UTC: 23:30 in the site's timezone (Tokyo).
    expect(items[0]).toHaveTextContent('May 10, 2026, 11:30 PM');
    expect(items[1]).toHaveTextContent('0% CTR');
    expect(items[1]).toHaveTextContent('1 sent');
  });

  it('Recent Notifications: the empty text links to the form', async () => {
    setUp({ data: dashboard({ recentNotifications: [] }) });
    renderApp('/dashboard');
    const empty = await screen.findByText(/No notifications sent yet\./);
    expect(empty).toHaveTextContent('No notifications sent yet. Create your first notification!');
    expect(screen.getByRole('link', { name: 'Create your first notification!' })).toHaveAttribute('href', '/notifications/new');
  });

  it('Recurring Notifications: the first 5 with "Every N …" pluralised, state and Edit links', async () => {
    const api = setUp({
      routes: {
        'GET /api/sites/site-1/notifications': ok({
          notifications: [
            recurring('r1', 'Daily digest', 'DAILY', 1, true),
            recurring('r2', 'Fortnightly picks', 'WEEKLY', 2, false),
            recurring('r3', 'Quarterly report', 'MONTHLY', 3, true),
            recurring('r4', 'Weekly deals', 'WEEKLY', 1, true),
            recurring('r5', 'Monthly recap', 'MONTHLY', 1, true),
            recurring('r6', 'Sixth', 'DAILY', 2, true),
          ],
          counts: { all: 6 },
        }),
      },
    });
    renderApp('/dashboard');
    await screen.findByText('Daily digest');
    expect(api.callsTo('GET /api/sites/site-1/notifications')[0]!.url.searchParams.get('type')).toBe('RECURRING');
    const recurringPanel = within(panel('Recurring Notifications'));
    const items = recurringPanel.getAllByRole('listitem');
    expect(items).toHaveLength(5);
    expect(recurringPanel.queryByText('Sixth')).not.toBeInTheDocument();
    expect(items[0]).toHaveTextContent('Every 1 day');
    expect(items[0]).toHaveTextContent('Active');
    expect(items[1]).toHaveTextContent('Every 2 weeks');
    expect(items[1]).toHaveTextContent('Inactive');
    expect(items[2]).toHaveTextContent('Every 3 months');
    expect(items[3]).toHaveTextContent('Every 1 week');
    expect(items[4]).toHaveTextContent('Every 1 month');
    expect(recurringPanel.getByRole('link', { name: 'Edit Fortnightly picks' })).toHaveAttribute('href', '/notifications/r2/edit');
    expect(recurringPanel.getByRole('link', { name: 'New recurring notification' })).toHaveTextContent('+ New');
  });

  it('Recurring Notifications: an empty state with a create link', async () => {
    setUp();
    renderApp('/dashboard');
    expect(await screen.findByText(/No recurring notifications yet\./)).toBeInTheDocument();
    expect(within(panel('Recurring Notifications')).getByRole('link', { name: 'Create a recurring notification' })).toHaveAttribute('href', '/notifications/new?type=RECURRING');
  });

  it('Welcome Campaigns: name, state, step count, created date, View and + New links', async () => {
    const campaigns = [
      { id: 'c1', name: 'Welcome series', is_active: true, steps_count: 3, created_at: '2026-04-02T10:00:00.000Z' },
      { id: 'c2', name: 'Old welcome', is_active: false, steps_count: 1, created_at: '2026-01-15T10:00:00.000Z' },
      ...['c3', 'c4', 'c5', 'c6'].map((id) => ({ id, name: `Campaign ${id}`, is_active: false, steps_count: 2, created_at: '2026-01-01T00:00:00.000Z' })),
    ];
    setUp({ routes: { 'GET /api/sites/site-1/welcome-campaigns': ok({ campaigns }) } });
    renderApp('/dashboard');
    await screen.findByText('Welcome series');
    const welcome = within(panel('Welcome Campaigns'));
    const items = welcome.getAllByRole('listitem');
    expect(items).toHaveLength(5);
    expect(items[0]).toHaveTextContent('Active');
    expect(items[0]).toHaveTextContent('3 steps');
    expect(items[0]).toHaveTextContent('Created Apr 2, 2026');
    expect(items[1]).toHaveTextContent('Inactive');
    expect(items[1]).toHaveTextContent('1 step');
    expect(welcome.getByRole('link', { name: 'View Welcome series' })).toHaveAttribute('href', '/campaigns');
    expect(welcome.getByRole('link', { name: 'New welcome campaign' })).toHaveAttribute('href', '/campaigns/new');
  });

  it('Welcome Campaigns: a 404 from the campaigns API means none yet', async () => {
    setUp();
    renderApp('/dashboard');
    expect(await screen.findByText(/No welcome campaigns yet\./)).toBeInTheDocument();
    expect(within(panel('Welcome Campaigns')).getByRole('link', { name: 'Create a welcome campaign' })).toHaveAttribute('href', '/campaigns/new');
    expect(within(panel('Welcome Campaigns')).queryByRole('alert')).not.toBeInTheDocument();
  });

  it('shows the server message when the figures cannot be loaded, and retries', async () => {
    let calls = 0;
    setUp({
      routes: {
        'GET /api/sites/site-1/analytics/dashboard': () => {
          calls += 1;
          return calls <= 2 ? fail(500, 'Internal server error') : ok(dashboard());
        },
      },
    });
    const { user } = renderApp('/dashboard');
    const alert = await screen.findByRole('alert', {}, { timeout: 5000 });
    expect(alert).toHaveTextContent('Could not load analytics');
    expect(alert).toHaveTextContent('Internal server error');
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('heading', { name: 'Total Subscribers' })).toBeInTheDocument();
  });

  it('a panel that fails says so without hiding the rest', async () => {
    setUp({ routes: { 'GET /api/sites/site-1/notifications': fail(500, 'Internal server error') } });
    renderApp('/dashboard');
    await waitFor(() => expect(within(panel('Recurring Notifications')).getByRole('alert')).toHaveTextContent('Could not load recurring notifications.'), { timeout: 5000 });
    expect(screen.getByRole('heading', { name: 'Total Subscribers' })).toBeInTheDocument();
  });
});

describe('dashboard: send outcomes and delivery health (issue 11)', () => {
  beforeAll(async () => {
    await import('./dashboard-page');
  }, 30_000);

  const HEALTH = 'GET /api/sites/site-1/analytics/delivery';
  const STALE = 'GET /api/sites/site-1/subscribers/stale';
  const CLEANUP = 'POST /api/sites/site-1/subscribers/stale/deactivate';
  const health = (days: number) => ({
    days,
    from: '2026-05-07',
    to: '2026-05-13',
    timezone: 'Asia/Tokyo',
    totals: { accepted: 60, failed: 34, expired: 4, failures: [{ reason: 'unreachable', count: 34 }], median_accept: { within_ms: 2000 } },
    services: [
      { push_service: 'fcm', accepted: 50, failed: 0, expired: 4, failures: [], median_accept: { within_ms: 1000 } },
      { push_service: 'mozilla', accepted: 10, failed: 34, expired: 0, failures: [{ reason: 'unreachable', count: 34 }], median_accept: { over_ms: 86_400_000 } },
    ],
    churn: Array.from({ length: days }, (_, i) => ({ date: `2026-05-${String(7 + (i % 7)).padStart(2, '0')}`, new: i === 0 ? 5 : 0, lost: i === 0 ? 3 : 0, lost_at_push_service: i === 0 ? 2 : 0 })),
    churn_totals: { new: 5, lost: 3, lost_at_push_service: 2 },
  });
  const stale = (count: number, active: number) => ({ days: 90, since: '2026-02-12T00:00:00.000Z', active, stale: count });

  it('lists a failed send as failed with its failures, and a send with errors with its share', async () => {
    const failedSend = makeRecent({
      id: 'n-3',
      title: 'Broken send',
      sent_at: null,
      finished_at: '2026-05-11T01:00:00.000Z',
      status: 'failed',
      counts: makeCounts({ targeted: 32, failed: 32 }),
    });
    const withErrors = makeRecent({ id: 'n-4', title: 'Summer sale', status: 'completed_with_errors', counts: makeCounts({ targeted: 94, sent: 60, failed: 34, delivered: 50 }) });
    setUp({ data: dashboard({ recentNotifications: [failedSend, withErrors] }), routes: { [HEALTH]: ok(health(7)), [STALE]: ok(stale(0, 10)) } });
    renderApp('/dashboard');

    const broken = await screen.findByTestId('recent-n-3');
    expect(broken).toHaveTextContent('Failed');
    expect(broken).toHaveTextContent('Failed May 11, 2026, 10:00 AM');
    expect(within(broken).getByTestId('recent-sent')).toHaveTextContent('0 sent');
    expect(within(broken).getByTestId('recent-failed')).toHaveTextContent('32 failed (100%)');
    expect(broken).not.toHaveTextContent('CTR');
    expect(within(screen.getByTestId('recent-n-4')).getByTestId('recent-failed')).toHaveTextContent('34 failed (36.2%)');
  });

  it('shows delivery by push service, failures by reason, medians and churn, for 7 or 30 days', async () => {
    const api = setUp({ routes: { [HEALTH]: (call) => ok(health(Number(call.url.searchParams.get('days')))), [STALE]: ok(stale(0, 10)) } });
    const { user } = renderApp('/dashboard');

    const fcm = await screen.findByTestId('health-fcm');
    expect(fcm).toHaveTextContent('Google FCM (Chrome, Edge, Opera)');
    expect(within(fcm).getByTestId('health-accepted')).toHaveTextContent('50');
    expect(within(fcm).getByTestId('health-expired')).toHaveTextContent('4');
    expect(within(fcm).getByTestId('health-median')).toHaveTextContent('within 1 s');
    const mozilla = screen.getByTestId('health-mozilla');
    expect(within(mozilla).getByTestId('health-failed')).toHaveTextContent('34');
    expect(within(mozilla).getByRole('list', { name: 'Failures at Mozilla (Firefox)' })).toHaveTextContent('34 · Push service unreachable');
    expect(within(mozilla).getByTestId('health-median')).toHaveTextContent('over 24 h');
    expect(screen.getByTestId('churn-totals')).toHaveTextContent('5 new subscriptions · 3 lost (2 expired at the push service, 1 unsubscribed or removed)');
    expect(api.callsTo(HEALTH)[0]!.url.searchParams.get('days')).toBe('7');

    await user.click(within(screen.getByRole('group', { name: 'Delivery period' })).getByRole('button', { name: '30 days' }));
    await waitFor(() => expect(api.callsTo(HEALTH).at(-1)!.url.searchParams.get('days')).toBe('30'));
  });

  it('cleans up stale subscribers on one click, after a confirm, and says the counts before and after', async () => {
    let cleaned = false;
    const api = setUp({
      routes: {
        [HEALTH]: ok(health(7)),
        [STALE]: () => ok(cleaned ? stale(0, 90) : stale(40, 130)),
        [CLEANUP]: () => {
          cleaned = true;
          return ok({ deactivated: 40, before: stale(40, 130), after: stale(0, 90) });
        },
      },
    });
    const refused = captureDialogs(false);
    const { user } = renderApp('/dashboard');
    const box = await screen.findByTestId('stale-subscribers');
    await waitFor(() => expect(within(box).getByTestId('stale-count')).toHaveTextContent('40'));
    expect(box).toHaveTextContent('40 of 130 active subscribers got nothing delivered in 90+ days.');

    await user.click(within(box).getByRole('button', { name: 'Clean up' }));
    expect(refused.confirms).toEqual(['Deactivate 40 stale subscribers? They will no longer receive notifications.']);
    expect(api.callsTo(CLEANUP)).toHaveLength(0);

    const accepted = captureDialogs(true);
    await user.click(within(box).getByRole('button', { name: 'Clean up' }));
    await waitFor(() => expect(accepted.alerts).toEqual(['Deactivated 40 stale subscribers. Active subscribers: 130 before, 90 now.']));
    await waitFor(() => expect(within(screen.getByTestId('stale-subscribers')).getByTestId('stale-count')).toHaveTextContent('0'));
    expect(within(screen.getByTestId('stale-subscribers')).getByRole('button', { name: 'Clean up' })).toBeDisabled();
  });

  it('Refresh during an outage keeps the figures on screen and says they could not be refreshed', async () => {
    let down = false;
    setUp({
      routes: {
        'GET /api/sites/site-1/analytics/dashboard': () => (down ? { status: 502, text: '<html>Bad gateway</html>' } : ok(dashboard())),
        [HEALTH]: ok(health(7)),
        [STALE]: ok(stale(0, 10)),
      },
    });
    const { user } = renderApp('/dashboard');
    await screen.findByRole('heading', { name: 'Total Subscribers' });
    down = true;
    await user.click(screen.getByRole('button', { name: 'Refresh' }));

    const banner = await screen.findByText('Could not refresh', {}, { timeout: 5000 });
    expect(banner.closest('[role="status"]')).toHaveTextContent(/Herald could not be reached\. The figures below are from \d/);
    expect(within(card('Total Subscribers')).getByText('1,234')).toBeInTheDocument();
    expect(screen.queryByText('Could not load analytics')).not.toBeInTheDocument();

    down = false;
    await user.click(within(banner.closest('[role="status"]') as HTMLElement).getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(screen.queryByText('Could not refresh')).not.toBeInTheDocument());
  });
});

describe('recurrenceText', () => {
  it('pluralises the unit by the number', () => {
    expect(recurrenceText('DAILY', 1)).toBe('Every 1 day');
    expect(recurrenceText('DAILY', 7)).toBe('Every 7 days');
    expect(recurrenceText('WEEKLY', 1)).toBe('Every 1 week');
    expect(recurrenceText('WEEKLY', 2)).toBe('Every 2 weeks');
    expect(recurrenceText('MONTHLY', 1)).toBe('Every 1 month');
    expect(recurrenceText('MONTHLY', 12)).toBe('Every 12 months');
  });
});
