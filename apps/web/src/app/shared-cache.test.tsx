import type { DashboardData, Segment } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeNotification, makeRecent } from '../test/notification-fixtures';
import { makeCampaign } from '../test/campaign-fixtures';
import { mockApi, ok } from '../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../test/fixtures';
import { captureDialogs, renderApp } from '../test/render-app';

// Spec §9: results stay fresh for 5 minutes, so what one screen changes must
// reach the others through the shared cache — without two screens ever
// reading each other's differently shaped answers. These tests move between
// screens the way a user does (sidebar links, no reload).

const site = makeSite({ id: 'site-1', name: 'Acme Store' });
const DASHBOARD = 'GET /api/sites/site-1/analytics/dashboard';
const days = ['2026-05-07', '2026-05-08', '2026-05-09', '2026-05-10', '2026-05-11', '2026-05-12', '2026-05-13'];

function dashboard(sent: number, recent: DashboardData['recentNotifications'] = []): DashboardData {
  return {
    period: { days: 7, from: days[0]!, to: days[6]!, previousStart: '2026-04-30T00:00:00.000Z', previousEnd: '2026-05-07T00:00:00.000Z', timezone: 'UTC' },
    metrics: {
      totalSubscribers: { value: 3, previous: 3, change: 0 },
      notificationsSent: { value: sent, previous: 0, change: null },
      clickRate: { value: 0, previous: 0, change: 0 },
      valueGenerated: { value: 0, previous: 0, change: 0, currency: 'USD' },
    },
    chart: days.map((date) => ({ date, sent: date === days[6] ? sent : 0, delivered: 0, clicked: 0 })),
    engagement: (['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const).map((name) => ({ name, clicks: 0 })),
    recentNotifications: recent,
    hasData: sent > 0,
  };
}

function setUp(routes: Parameters<typeof mockApi>[0]) {
  signIn(makeUser());
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-1/notifications': ok({ notifications: [], counts: { all: 0 } }),
    'GET /api/sites/site-1/welcome-campaigns': ok({ campaigns: [] }),
    ...routes,
  });
}

const sidebarLink = (name: string) => within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name });

describe('screens sharing the cache (spec §9 5-minute stale time)', () => {
  beforeAll(async () => {
    await import('../features/dashboard/pages/dashboard-page');
  }, 30_000);

  it('the dashboard’s campaign panel and the Campaigns page keep their own entries: going from one to the other shows whole campaigns', async () => {
    setUp({ 'GET /api/sites/site-1/welcome-campaigns': ok({ campaigns: [makeCampaign()] }), [DASHBOARD]: ok(dashboard(0)) });
    const { user } = renderApp('/dashboard');
    const panel = (await screen.findByRole('heading', { name: 'Welcome Campaigns', level: 2 })).closest('div.rounded-xl') as HTMLElement;
    expect(await within(panel).findByText('3 steps')).toBeInTheDocument();

    await user.click(sidebarLink('Campaigns'));
    const card = await screen.findByRole('article', { name: 'Welcome series' });
    expect(within(card).getByText('Step 3: Send after 1440 minutes')).toBeInTheDocument();
    expect(within(card).getByText('25%')).toBeInTheDocument();

    await user.click(sidebarLink('Dashboard'));
    expect(await within((await screen.findByRole('heading', { name: 'Welcome Campaigns', level: 2 })).closest('div.rounded-xl') as HTMLElement).findByText('3 steps')).toBeInTheDocument();
  });

  it('a notification sent from the list makes the dashboard fetch its figures again', async () => {
    const draft = makeNotification({ id: 'n-1', title: 'Flash sale', status: 'draft' });
    let sent = false;
    const api = setUp({
      [DASHBOARD]: () =>
        sent
          ? ok(dashboard(3, [makeRecent({ id: 'n-1', title: 'Flash sale', message: draft.message, sent_at: '2026-05-13T10:00:00.000Z', sent_count: 3 })]))
          : ok(dashboard(0)),
      'GET /api/sites/site-1/notifications': () =>
        ok({ notifications: [sent ? { ...draft, status: 'completed' } : draft], counts: { all: 1, draft: sent ? 0 : 1, completed: sent ? 1 : 0 } }),
      'POST /api/notifications/n-1/send': () => {
        sent = true;
        return ok({ notification: { ...draft, status: 'sending' } });
      },
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/dashboard');
    expect(await screen.findByText('No notifications sent yet.', { exact: false })).toBeInTheDocument();
    expect(api.callsTo(DASHBOARD)).toHaveLength(1);

    await user.click(sidebarLink('Notifications'));
    await user.click(within(await screen.findByRole('article', { name: 'Flash sale' })).getByRole('button', { name: 'Send Now' }));
    await waitFor(() => expect(dialogs.alerts).toContain('Notification sent successfully!'));

    await user.click(sidebarLink('Dashboard'));
    const recent = (await screen.findByRole('heading', { name: 'Recent Notifications', level: 2 })).closest('div.rounded-xl') as HTMLElement;
    const title = await within(recent).findByRole('link', { name: 'Flash sale' });
    // The title opens the notification's own view (sent, delivered, clicked).
    expect(title).toHaveAttribute('href', '/notifications/n-1');
    expect(within(recent).getByText('3 sent')).toBeInTheDocument();
    expect(api.callsTo(DASHBOARD)).toHaveLength(2);
  });

  it('Refresh on the dashboard fetches the figures and both panels again, and says when they are from', async () => {
    const api = setUp({ [DASHBOARD]: ok(dashboard(0)) });
    const { user } = renderApp('/dashboard');
    expect(await screen.findByTestId('dashboard-updated-at')).toHaveTextContent(/^Updated \d{1,2}:\d{2} (AM|PM)$/);
    await waitFor(() => expect(api.callsTo('GET /api/sites/site-1/welcome-campaigns')).toHaveLength(1));
    await user.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(api.callsTo(DASHBOARD)).toHaveLength(2));
    await waitFor(() => expect(api.callsTo('GET /api/sites/site-1/welcome-campaigns')).toHaveLength(2));
    expect(api.callsTo('GET /api/sites/site-1/notifications').filter((call) => call.url.searchParams.get('type') === 'RECURRING')).toHaveLength(2);
  });

  it('a segment created on the Segments page is offered at once by the RSS feed and welcome campaign target selects', async () => {
    const existing: Segment = {
      id: 'seg-1',
      site_id: 'site-1',
      name: 'Chrome users',
      rules: { browser: 'Chrome' },
      estimated_count: 2,
      is_estimate: false,
      sample_size: null,
      created_at: '2026-05-01T00:00:00.000Z',
      updated_at: '2026-05-01T00:00:00.000Z',
    };
    const segments: Segment[] = [existing];
    setUp({
      'GET /api/sites/site-1/segments': () => ok({ segments }),
      'POST /api/sites/site-1/segments': (call) => {
        const created: Segment = { ...existing, id: 'seg-2', name: (call.body as { name: string }).name, rules: {}, estimated_count: 3 };
        segments.unshift(created);
        return ok({ segment: created }, 201);
      },
      'GET /api/sites/site-1/rss-feeds': ok({ feeds: [] }),
    });
    captureDialogs();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByTestId('add-feed'));
    const feedTarget = await screen.findByRole('combobox', { name: /Target Segment/ });
    await waitFor(() => expect(within(feedTarget).getByRole('option', { name: /^Chrome users( \(|$)/ })).toBeInTheDocument());

    await user.click(sidebarLink('Campaigns'));
    await user.click(await screen.findByRole('link', { name: 'Create your first campaign' }));
    expect(within(await screen.findByRole('combobox', { name: /^Target/ })).getByRole('option', { name: /^Chrome users( \(|$)/ })).toBeInTheDocument();

    await user.click(sidebarLink('Segments'));
    await user.click(await screen.findByRole('button', { name: '+ New Segment' }));
    await user.type(screen.getByLabelText(/^Segment Name/), 'Everyone new');
    await user.click(screen.getByRole('button', { name: /Create Segment|Save/ }));
    expect(await screen.findByRole('article', { name: 'Everyone new' })).toBeInTheDocument();

    await user.click(sidebarLink('RSS Feeds'));
    await user.click(await screen.findByTestId('add-feed'));
    const refreshedFeedTarget = await screen.findByRole('combobox', { name: /Target Segment/ });
    expect(await within(refreshedFeedTarget).findByRole('option', { name: /^Everyone new( \(|$)/ })).toBeInTheDocument();

    await user.click(sidebarLink('Campaigns'));
    await user.click(await screen.findByRole('link', { name: 'Create your first campaign' }));
    expect(await within(await screen.findByRole('combobox', { name: /^Target/ })).findByRole('option', { name: /^Everyone new( \(|$)/ })).toBeInTheDocument();
  });

  it('the setup checklist seeing the first subscriber makes the dashboard’s cards count it too', async () => {
    let subscribers = 0;
    const figures = () => {
      const data = dashboard(0);
      return { ...data, metrics: { ...data.metrics, totalSubscribers: { value: subscribers, previous: 0, change: null } } };
    };
    const api = setUp({
      [DASHBOARD]: () => ok(figures()),
      'GET /api/sites/site-1/checklist': () =>
        ok({
          checklist: {
            dismissed: false,
            install_check: null,
            first_subscriber_at: subscribers > 0 ? '2026-05-13T09:00:00.000Z' : null,
            active_subscribers: subscribers,
            test_devices: 0,
            test_sent_at: null,
          },
        }),
      'GET /api/sites/site-1/install-code': ok({ installCode: '<script></script>', snippet: '<script></script>', serviceWorker: { fileName: 'herald-sw.js', content: '' }, nextSteps: [], warnings: [] }),
      'GET /api/sites/site-1/test-devices': ok({ devices: [] }),
    });
    renderApp('/dashboard');
    const totalCard = async () => (await screen.findByRole('heading', { name: 'Total Subscribers', level: 3 })).closest('div.rounded-xl') as HTMLElement;
    expect(await screen.findByTestId('setup-checklist')).toBeInTheDocument();
    await waitFor(async () => expect(within(await totalCard()).getByText('0')).toBeInTheDocument());
    const reads = api.callsTo(DASHBOARD).length;

    // A visitor subscribes: the checklist's poll sees it, and the figures (cached for 5 minutes) are read again.
    subscribers = 1;
    await waitFor(() => expect(screen.getByTestId('setup-checklist')).toHaveTextContent('1 active now'), { timeout: 8000 });
    await waitFor(async () => expect(within(await totalCard()).getByText('1')).toBeInTheDocument());
    expect(api.callsTo(DASHBOARD).length).toBe(reads + 1);
  }, 20_000);
});
