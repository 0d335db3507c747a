import type { Notification, RssFeed, Subscriber, SubscriberImport } from '@herald/contracts';
import { act, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { makeCounts, makeNotification, makePerformance } from '../../../test/notification-fixtures';

// figures that stay stale after an action changed them (the cache is
// fresh for 5 minutes, so a screen visited before the action shows its old
// figures when visited again).

const site = makeSite({ id: 'site-1', name: 'Acme Store' });
const LIST = 'GET /api/sites/site-1/notifications';
const allCounts = (n: Notification[]) => {
  const counts: Record<string, number> = { all: n.length, draft: 0, scheduled: 0, sending: 0, completed: 0, completed_with_errors: 0, cancelled: 0, failed: 0 };
  for (const item of n) counts[item.status] = (counts[item.status] ?? 0) + 1;
  return counts;
};

function setUp(routes: Parameters<typeof mockApi>[0]) {
  signIn();
  return mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [site] }), ...routes });
}

const card = (title: string) => screen.getByRole('article', { name: title });

describe('stale figures after an action', () => {
  it('A/B "Send this variant to the rest" refreshes the notifications list (it is sending again, not Completed)', async () => {
    let picked = false;
    const base = makeNotification({
      id: 'c1',
      title: 'Flash sale',
      status: 'completed',
      sent_at: '2026-02-20T15:00:00.000Z',
      completed_at: '2026-02-20T15:02:00.000Z',
      counts: makeCounts({ targeted: 200, sent: 200, delivered: 90, clicked: 9 }),
    });
    const current = () => (picked ? { ...base, status: 'sending' as const, completed_at: null, counts: makeCounts({ targeted: 1000, sent: 200, delivered: 90, clicked: 9 }) } : base);
    const testing = makePerformance({
      notification_id: 'c1',
      variants: [
        { index: 0, title: 'Flash sale', reach: 100, delivered: 90, clicked: 9, click_rate: 10 },
        { index: 1, title: 'Last days', reach: 100, delivered: 0, clicked: 0, click_rate: 0 },
      ],
      ab_test: { status: 'testing', sample_percent: 20, decide: 'manual', decides_at: null, winner_index: null, decided_at: null, decided_by: null, leader_index: 0, significant: false },
    });
    setUp({
      [LIST]: () => ok({ notifications: [current()], counts: allCounts([current()]) }),
      'GET /api/notifications/c1': () => ok({ notification: current() }),
      'GET /api/notifications/c1/performance': () => ok({ ...testing, status: current().status }),
      'POST /api/notifications/c1/ab-test/winner': () => {
        picked = true;
        return ok({ ab_test: { ...testing.ab_test!, status: 'decided', winner_index: 0, decided_by: 'manual', decided_at: '2026-02-20T16:00:00.000Z' } });
      },
    });
    captureDialogs();
    const { user, router } = renderApp('/notifications');
    expect(within(await screen.findByRole('article', { name: 'Flash sale' })).getByTestId('status-badge')).toHaveTextContent('Completed');

    await act(() => router.navigate('/notifications/c1'));
    const rowA = await screen.findByTestId('ab-variant-row-A');
    await user.click(within(rowA).getByRole('button', { name: /^Send this variant to the rest/ }));
    await waitFor(() => expect(picked).toBe(true));
    // The notification page itself shows it sending again.
    await waitFor(() => expect(screen.getAllByTestId('status-badge')[0]).toHaveTextContent('Sending'));

    await act(() => router.navigate('/notifications'));
    // The list must not keep calling it "Completed" (green) while the winner goes to the rest.
    await waitFor(() => expect(within(card('Flash sale')).getByTestId('status-badge')).toHaveTextContent('Sending'), { timeout: 3000 });
  });

  it('RSS "Check now" that sent a notification refreshes the notifications list', async () => {
    let checked = false;
    const rssSent = makeNotification({ id: 'rss-1', title: 'New post: Spring recipes', source: 'rss', status: 'sending', sent_at: '2026-03-10T10:00:00.000Z', counts: makeCounts({ targeted: 10, sent: 2 }) });
    const feed: RssFeed = {
      id: 'feed-1',
      site_id: 'site-1',
      name: 'Acme posts',
      url: 'https://blog.acme.example/feed.xml',
      icon_url: null,
      utm_params: { utm_source: null, utm_medium: null, utm_campaign: null },
      show_action_buttons: false,
      create_draft: false,
      max_pushes_per_day: 2,
      segment_id: null,
      is_active: true,
      last_fetched_at: '2026-03-10T09:00:00.000Z',
      last_item_guid: 'post-41',
      last_error: null,
      next_check_at: '2026-03-10T09:15:00.000Z',
      pushes_today: 0,
      skipped_today: 0,
      created_at: '2026-03-10T09:00:00.000Z',
      updated_at: '2026-03-10T09:00:00.000Z',
    };
    setUp({
      [LIST]: () => {
        const items = checked ? [rssSent] : [];
        return ok({ notifications: items, counts: allCounts(items) });
      },
      'GET /api/sites/site-1/rss-feeds': ok({ feeds: [feed] }),
      'GET /api/sites/site-1/segments': ok({ segments: [] }),
      'POST /api/rss-feeds/feed-1/check': () => {
        checked = true;
        return ok({
          check: {
            outcome: 'checked',
            checked_at: '2026-03-10T10:00:00.000Z',
            items_in_feed: 10,
            new_items: 1,
            sent: 1,
            drafted: 0,
            skipped: 0,
            notification_ids: ['rss-1'],
            error: null,
            summary: '1 new item: 1 notification sent.',
          },
          feed: { ...feed, last_item_guid: 'post-42', pushes_today: 1, last_fetched_at: '2026-03-10T10:00:00.000Z' },
        });
      },
    });
    const { user, router } = renderApp('/notifications');
    expect(await screen.findByText('No notifications yet')).toBeInTheDocument();

    await act(() => router.navigate('/rss-feeds'));
    await user.click(await screen.findByRole('button', { name: 'Check now' }));
    expect(await screen.findByText('1 new item: 1 notification sent.')).toBeInTheDocument();

    await act(() => router.navigate('/notifications'));
    expect(await screen.findByRole('article', { name: 'New post: Spring recipes' }, { timeout: 3000 })).toBeInTheDocument();
  });

  it('removing a subscriber refreshes a draft’s "Will reach N subscribers"', async () => {
    let active = 5;
    const draft = makeNotification({ id: 'd1', title: 'Draft sale', status: 'draft' });
    const subscriber: Subscriber = {
      id: 'sub-1',
      browser: 'Chrome',
      os: 'Windows',
      country: 'DE',
      metadata: { user_agent: 'Mozilla/5.0' },
      language: 'de-DE',
      timezone: 'Europe/Berlin',
      subscribed_at: '2026-02-10T15:00:00.000Z',
      last_seen_at: '2026-02-28T03:30:00.000Z',
      unsubscribed_at: null,
      is_active: true,
      tags: [],
      test_device: false,
      test_device_name: null,
    };
    setUp({
      [LIST]: ok({ notifications: [draft], counts: allCounts([draft]) }),
      'GET /api/sites/site-1/audience': () => ok({ count: active, segment_id: null }),
      'GET /api/sites/site-1/subscribers': () => ok({ subscribers: [{ ...subscriber, is_active: active === 5 }], total: 1, page: 1, limit: 50 }),
      'DELETE /api/subscribers/sub-1': () => {
        active = 4;
        return ok({ subscriber: { ...subscriber, is_active: false, unsubscribed_at: '2026-03-01T00:00:00.000Z' } });
      },
    });
    captureDialogs();
    const { user, router } = renderApp('/notifications');
    expect(await within(await screen.findByRole('article', { name: 'Draft sale' })).findByTestId('reach')).toHaveTextContent('Will reach 5 subscribers');

    await act(() => router.navigate('/subscribers'));
    await user.click(await screen.findByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(active).toBe(4));

    await act(() => router.navigate('/notifications'));
    await waitFor(() => expect(within(card('Draft sale')).getByTestId('reach')).toHaveTextContent('Will reach 4 subscribers'), { timeout: 3000 });
  });

  it('an import that finished refreshes the Subscribers total', async () => {
    let total = 10;
    let polls = 0;
    const running: SubscriberImport = {
      id: 'imp-1',
      site_id: 'site-1',
      status: 'running',
      file_name: 'onesignal.csv',
      bytes_read: 500,
      file_size: 1000,
      rows_read: 5,
      imported: 5,
      updated: 0,
      rejected: 0,
      enrol_in_welcome_campaign: false,
      error: null,
      report_url: null,
      created_at: '2026-03-05T10:00:00.000Z',
      finished_at: null,
    };
    setUp({
      'GET /api/sites/site-1/subscribers': () => ok({ subscribers: [], total, page: 1, limit: 50 }),
      'GET /api/sites/site-1/vapid-keys': ok({ keys: [] }),
      'GET /api/sites/site-1/subscriber-imports': () => {
        polls += 1;
        if (polls < 2) return ok({ imports: [running] });
        total = 18;
        return ok({ imports: [{ ...running, status: 'done', bytes_read: 1000, rows_read: 8, imported: 8, finished_at: '2026-03-05T10:01:00.000Z' }] });
      },
    });
    const { router } = renderApp('/subscribers');
    expect(await screen.findByTestId('subscriber-total')).toHaveTextContent('10 subscribers');

    await act(() => router.navigate('/settings?tab=import'));
    expect(await screen.findByText('Done', {}, { timeout: 4000 })).toBeInTheDocument();

    await act(() => router.navigate('/subscribers'));
    await waitFor(() => expect(screen.getByTestId('subscriber-total')).toHaveTextContent('18 subscribers'), { timeout: 3000 });
  });
});

describe('a target that could not be loaded is not a "Deleted segment"', () => {
  it('the list names the segment as unknown, not deleted, when the segments could not be fetched', async () => {
    const n = makeNotification({ id: 'd1', title: 'Draft sale', status: 'scheduled', scheduled_at: '2026-03-07T09:00:00.000Z', segment_id: 'seg-1' });
    setUp({
      [LIST]: ok({ notifications: [n], counts: allCounts([n]) }),
      'GET /api/sites/site-1/segments': fail(500, 'Database is busy'),
    });
    renderApp('/notifications');
    const target = within(await screen.findByRole('article', { name: 'Draft sale' })).getByTestId('target');
    // The segment exists; the server only failed to list segments (one retry, then error).
    await waitFor(() => expect(target).not.toHaveTextContent('Loading...'), { timeout: 4000 });
    expect(target).not.toHaveTextContent('Deleted segment');
  });
});
