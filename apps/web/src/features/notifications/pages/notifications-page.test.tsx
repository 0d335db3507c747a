import type { Notification } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok, type MockResponse } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { makeCounts, makeNotification } from '../../../test/notification-fixtures';

const site = makeSite({ id: 'site-1', settings: { ...makeSite().settings, timezone: 'UTC' } });
const LIST = 'GET /api/sites/site-1/notifications';

const draft = makeNotification({ id: 'd1', title: 'Draft sale', status: 'draft' });
const scheduled = makeNotification({ id: 's1', title: 'Weekend promo', status: 'scheduled', scheduled_at: '2026-03-07T09:00:00.000Z' });
const sending = makeNotification({
  id: 'g1',
  title: 'Going out',
  status: 'sending',
  sent_at: '2026-03-02T08:00:00.000Z',
  counts: makeCounts({ targeted: 200, sent: 40, failed: 10, delivered: 30, clicked: 2 }),
});
const completed = makeNotification({
  id: 'c1',
  title: 'Spring launch',
  status: 'completed',
  sent_at: '2026-03-01T12:00:00.000Z',
  counts: makeCounts({ targeted: 120, sent: 118, expired: 2, delivered: 100, clicked: 12 }),
});
const cancelled = makeNotification({ id: 'x1', title: 'Called off', status: 'cancelled' });
const failed = makeNotification({ id: 'f1', title: 'Broken send', status: 'failed', last_error: '3 of 3 not accepted: 3 unreachable (fcm)', counts: makeCounts({ targeted: 3, failed: 3 }) });
const withErrors = makeNotification({
  id: 'e1',
  title: 'Summer sale',
  status: 'completed_with_errors',
  sent_at: '2026-03-01T15:00:00.000Z',
  last_error: '34 of 94 not accepted: 34 unreachable (mozilla)',
  counts: makeCounts({ targeted: 94, sent: 60, failed: 34, delivered: 50, clicked: 5 }),
});
const recurring = makeNotification({
  id: 'r1',
  title: 'Daily digest',
  type: 'RECURRING',
  recurringSchedule: { intervalType: 'WEEKLY', intervalValue: 2, startDate: '2026-03-02T09:00:00.000Z', endDate: null, isActive: true, nextRunAt: null },
});
const triggered = makeNotification({ id: 't1', title: 'Cart reminder', type: 'TRIGGERED', status: 'scheduled', trigger: { event: 'cart_abandoned', delay_minutes: 90 } });

// One entry per status plus all, adding up (as the server sends them).
const counts = { all: 10, draft: 3, scheduled: 1, sending: 1, completed: 1, completed_with_errors: 2, cancelled: 1, failed: 1 };
const list = (notifications: Notification[], c: Record<string, number> = counts): MockResponse => ok({ notifications, counts: c });

function setUp(routes: Parameters<typeof mockApi>[0]) {
  signIn();
  return mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [site] }), ...routes });
}

const card = (title: string) => screen.getByRole('article', { name: title });
/** The action buttons and links of a card, in order. */
const buttonsOf = (title: string) => [...card(title).querySelectorAll('button, a')].map((b) => b.textContent);

describe('notifications list (spec §2 Notifications list)', () => {
  it('shows each notification with its status badge, type badge, dates, schedule and trigger, and a count line', async () => {
    setUp({
      [LIST]: list([draft, scheduled, completed, failed, recurring, triggered], { ...counts, all: 6, draft: 1, scheduled: 3, sending: 0, completed: 1, completed_with_errors: 0, cancelled: 0 }),
      'GET /api/sites/site-1/audience': ok({ count: 0, segment_id: null }),
    });
    renderApp('/notifications');

    expect(await screen.findByRole('article', { name: 'Draft sale' })).toBeInTheDocument();
    expect(screen.getByTestId('notification-count')).toHaveTextContent('6 notifications');
    expect(within(card('Draft sale')).getByTestId('status-badge')).toHaveTextContent('Draft');
    expect(within(card('Weekend promo')).getByTestId('status-badge')).toHaveTextContent('Scheduled');
    expect(within(card('Spring launch')).getByTestId('status-badge')).toHaveTextContent('Completed');
    expect(within(card('Broken send')).getByTestId('status-badge')).toHaveTextContent('Failed');

    // A type badge only when not one-time.
    expect(within(card('Draft sale')).queryByTestId('type-badge')).not.toBeInTheDocument();
    expect(within(card('Daily digest')).getByTestId('type-badge')).toHaveTextContent('Recurring');
    expect(within(card('Cart reminder')).getByTestId('type-badge')).toHaveTextContent('Triggered');

    expect(within(card('Daily digest')).getByText('Repeats every 2 weeks')).toBeInTheDocument();
    expect(within(card('Cart reminder')).getByText('When “cart_abandoned” happens, sent after 90 minutes')).toBeInTheDocument();

    expect(within(card('Draft sale')).getByText('Created').nextSibling).toHaveTextContent('Mar 1, 2026, 10:00 AM');
    expect(within(card('Weekend promo')).getByText('Scheduled', { selector: 'dt' }).nextSibling).toHaveTextContent('Mar 7, 2026, 9:00 AM');
    expect(within(card('Spring launch')).getByText('Sent on').nextSibling).toHaveTextContent('Mar 1, 2026, 12:00 PM');
    expect(within(card('Broken send')).getByTestId('failure-reason')).toHaveTextContent('Failed: 3 of 3 not accepted: 3 unreachable (fcm) See why');
    expect(within(card('Broken send')).getByRole('link', { name: 'See why' })).toHaveAttribute('href', '/notifications/f1');
    // A send nobody accepted was never "sent".
    expect(within(card('Broken send')).queryByText('Sent on')).not.toBeInTheDocument();
    // Every card names its target.
    expect(within(card('Spring launch')).getByTestId('target')).toHaveTextContent('All Subscribers');
    // A finished send shows sent, delivered, click rate and failures; expired apart.
    expect(within(card('Spring launch')).getByTestId('outcome-sent')).toHaveTextContent('118');
    expect(within(card('Spring launch')).getByTestId('outcome-delivered')).toHaveTextContent('100');
    expect(within(card('Spring launch')).getByTestId('outcome-click-rate')).toHaveTextContent('12%');
    expect(within(card('Spring launch')).getByTestId('outcome-failed')).toHaveTextContent('0');
    expect(within(card('Spring launch')).getByTestId('outcome-expired')).toHaveTextContent('2');
    // A triggered notification waits for its event, and says how often it fired.
    expect(within(card('Cart reminder')).getByTestId('status-badge')).toHaveTextContent('Waiting for event');
    expect(within(card('Cart reminder')).getByTestId('fire-count')).toHaveTextContent('Not fired yet');
    // A draft says whom it would reach, and warns when that is nobody.
    expect(await within(card('Draft sale')).findByTestId('reach')).toHaveTextContent('Will reach 0 subscribers (nobody is subscribed to this target yet)');
  });

  it('a send completed with errors shows its share of failures and why; a recurring one its next run; a triggered one its firings', async () => {
    const weekly = makeNotification({ ...recurring, status: 'scheduled', recurringSchedule: { ...recurring.recurringSchedule!, nextRunAt: '2026-03-16T09:00:00.000Z' } });
    const fired = makeNotification({ ...triggered, status: 'scheduled', fire_count: 3, segment_id: 'seg-1' });
    setUp({
      [LIST]: list([withErrors, weekly, fired]),
      'GET /api/sites/site-1/segments': ok({ segments: [{ id: 'seg-1', name: 'Cart owners', estimated_count: 40 }] }),
    });
    renderApp('/notifications');

    const sale = await screen.findByRole('article', { name: 'Summer sale' });
    expect(within(sale).getByTestId('status-badge')).toHaveTextContent('Completed with errors');
    expect(within(sale).getByTestId('outcome-failed')).toHaveTextContent('34 (36.2%)');
    expect(within(sale).getByTestId('failure-reason')).toHaveTextContent('34 of 94 failed (36.2%). See why');
    expect(within(card('Daily digest')).getByTestId('next-run')).toHaveTextContent('Mar 16, 2026, 9:00 AM');
    expect(within(card('Cart reminder')).getByTestId('fire-count')).toHaveTextContent('Fired 3 times');
    expect(await within(card('Cart reminder')).findByText('Cart owners')).toBeInTheDocument();
  });

  it('a recurring or triggered notification’s date is its latest send: "Last sent"', async () => {
    const sentTrigger = makeNotification({ ...triggered, status: 'scheduled', sent_at: '2026-03-03T08:15:00.000Z' });
    setUp({ [LIST]: list([sentTrigger, completed], { all: 2, scheduled: 1, completed: 1 }) });
    renderApp('/notifications');
    await screen.findByRole('article', { name: 'Cart reminder' });
    expect(within(card('Cart reminder')).getByText('Last sent').nextSibling).toHaveTextContent('Mar 3, 2026, 8:15 AM');
    expect(within(card('Spring launch')).getByText('Sent on').nextSibling).toHaveTextContent('Mar 1, 2026, 12:00 PM');
  });

  it('shows dates in the site’s timezone', async () => {
    const tokyo = makeSite({ id: 'site-1', settings: { ...site.settings, timezone: 'Asia/Tokyo' } });
    signIn();
    mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [tokyo] }), [LIST]: list([scheduled]) });
    renderApp('/notifications');

    const dt = await screen.findByText('Scheduled', { selector: 'dt' });
    expect(dt.nextSibling).toHaveTextContent('Mar 7, 2026, 6:00 PM');
  });

  it('offers the status filters all, draft, scheduled, sending, completed, failed, cancelled, counts that add up, and asks the server for the chosen status', async () => {
    const api = setUp({
      [LIST]: (call) => {
        const status = call.url.searchParams.get('status');
        // What the server would answer: the counts are the same whatever the filter (this site has no completed notification).
        const c = { ...counts, all: 7, draft: 1, scheduled: 2, completed: 0, completed_with_errors: 0, cancelled: 2 };
        return list(status === 'draft' ? [draft] : status === 'completed,completed_with_errors' ? [] : status === 'failed' ? [failed] : [draft, scheduled], c);
      },
    });
    const { user } = renderApp('/notifications');

    const filters = await screen.findByRole('group', { name: 'Filter by status' });
    expect(within(filters).getAllByRole('button').map((b) => b.textContent?.replace(/\d+$/, ''))).toEqual(['All', 'Draft', 'Scheduled', 'Sending', 'Completed', 'Failed', 'Cancelled']);
    expect(within(filters).getByRole('button', { name: 'All' })).toHaveAttribute('aria-pressed', 'true');
    await screen.findByText('7 notifications');
    // Counts per status come from data.counts; Completed holds those completed with errors; they add up to All.
    const tabCounts = Object.fromEntries(within(filters).getAllByRole('button').map((b) => [b.textContent!.replace(/\d+$/, ''), Number(/\d+$/.exec(b.textContent!)![0])]));
    expect(tabCounts).toEqual({ All: 7, Draft: 1, Scheduled: 2, Sending: 1, Completed: 0, Failed: 1, Cancelled: 2 });
    const { All: all, ...byStatus } = tabCounts;
    expect(Object.values(byStatus).reduce((sum, n) => sum + n, 0)).toBe(all);
    // A page of 50, newest first (docs/product.md, "Notifications list").
    expect(api.callsTo(LIST)[0]?.url.search).toBe('?page=1&limit=50');

    await user.click(within(filters).getByRole('button', { name: 'Failed' }));
    expect(await screen.findByText('1 failed notification')).toBeInTheDocument();
    expect(api.callsTo(LIST).at(-1)?.url.searchParams.get('status')).toBe('failed');

    await user.click(within(filters).getByRole('button', { name: 'Draft' }));
    expect(await screen.findByText('1 draft notification')).toBeInTheDocument();
    expect(api.callsTo(LIST).at(-1)?.url.searchParams.get('status')).toBe('draft');
    expect(within(filters).getByRole('button', { name: 'Draft' })).toHaveAttribute('aria-pressed', 'true');

    await user.click(within(filters).getByRole('button', { name: 'Completed' }));
    expect(await screen.findByText('0 completed notifications')).toBeInTheDocument();
    expect(api.callsTo(LIST).at(-1)?.url.searchParams.get('status')).toBe('completed,completed_with_errors');
    expect(screen.getByRole('heading', { name: 'No completed notifications' })).toBeInTheDocument();
  });

  it('pages through a long list 50 at a time, the count line counting them all (docs/product.md, "Notifications list")', async () => {
    const many = Array.from({ length: 120 }, (_, i) => makeNotification({ id: `n${i}`, title: `Notification ${i + 1}`, status: 'completed' }));
    const api = setUp({
      [LIST]: (call) => {
        const page = Number(call.url.searchParams.get('page'));
        const limit = Number(call.url.searchParams.get('limit'));
        return list(many.slice((page - 1) * limit, page * limit), { ...counts, all: 120, draft: 0, scheduled: 0, sending: 0, completed: 120, completed_with_errors: 0, cancelled: 0, failed: 0 });
      },
    });
    const { user } = renderApp('/notifications');

    expect(await screen.findByRole('article', { name: 'Notification 1' })).toBeInTheDocument();
    expect(screen.getByTestId('notification-count')).toHaveTextContent('120 notifications');
    expect(within(screen.getByRole('list', { name: 'Notifications' })).getAllByRole('listitem')).toHaveLength(50);
    const pagination = screen.getByRole('navigation', { name: 'Pagination' });
    expect(pagination).toHaveTextContent('Page 1 of 3');
    expect(within(pagination).getByRole('button', { name: 'Previous' })).toBeDisabled();

    await user.click(within(pagination).getByRole('button', { name: 'Next' }));
    expect(await screen.findByRole('article', { name: 'Notification 51' })).toBeInTheDocument();
    expect(api.callsTo(LIST).at(-1)?.url.searchParams.get('page')).toBe('2');
    await user.click(within(pagination).getByRole('button', { name: 'Next' }));
    expect(await screen.findByRole('article', { name: 'Notification 120' })).toBeInTheDocument();
    expect(within(screen.getByRole('list', { name: 'Notifications' })).getAllByRole('listitem')).toHaveLength(20);
    expect(pagination).toHaveTextContent('Page 3 of 3');
    expect(within(pagination).getByRole('button', { name: 'Next' })).toBeDisabled();

    // Another filter starts at its first page.
    await user.click(within(screen.getByRole('group', { name: 'Filter by status' })).getByRole('button', { name: 'Completed' }));
    await waitFor(() => expect(api.callsTo(LIST).at(-1)?.url.searchParams.get('status')).toBe('completed,completed_with_errors'));
    expect(api.callsTo(LIST).at(-1)?.url.searchParams.get('page')).toBe('1');
    expect(await screen.findByRole('article', { name: 'Notification 1' })).toBeInTheDocument();
  });

  it('shows "No notifications yet" with a create link when there are none', async () => {
    setUp({ [LIST]: list([], {}) });
    renderApp('/notifications');

    expect(await screen.findByRole('heading', { name: 'No notifications yet' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Create Notification' })).toHaveAttribute('href', '/notifications/new');
  });

  it('offers only the actions each status allows (spec §4)', async () => {
    setUp({ [LIST]: list([draft, scheduled, sending, completed, cancelled, failed, recurring, withErrors]) });
    renderApp('/notifications');
    await screen.findByRole('article', { name: 'Draft sale' });

    expect(buttonsOf('Draft sale')).toEqual(['Send Now', 'Edit', 'Delete']);
    expect(buttonsOf('Weekend promo')).toEqual(['Edit', 'Cancel', 'Delete']);
    expect(buttonsOf('Going out')).toEqual(['View']);
    expect(buttonsOf('Spring launch')).toEqual(['View', 'Duplicate']);
    expect(buttonsOf('Called off')).toEqual(['View', 'Duplicate']);
    expect(buttonsOf('Broken send')).toEqual(['View', 'Retry', 'Duplicate', 'See why']);
    // Completed with errors: its failed part can be sent again.
    expect(buttonsOf('Summer sale')).toEqual(['View', 'Retry', 'Duplicate', 'See why']);
    // Only one-time drafts can be sent now (the server refuses the others).
    expect(buttonsOf('Daily digest')).toEqual(['Edit', 'Delete']);
    expect(within(card('Draft sale')).getByRole('link', { name: 'Edit' })).toHaveAttribute('href', '/notifications/d1/edit');
    expect(within(card('Spring launch')).getByRole('link', { name: 'View' })).toHaveAttribute('href', '/notifications/c1');
  });

  it('Send Now asks first, sends, alerts "Notification sent successfully!" and refreshes the list', async () => {
    let sent = false;
    const api = setUp({
      [LIST]: () => list([sent ? { ...draft, status: 'completed' } : draft]),
      'POST /api/notifications/d1/send': () => {
        sent = true;
        return ok({ notification: { ...draft, status: 'sending' } });
      },
    });
    const dialogs = captureDialogs(false);
    const { user } = renderApp('/notifications');

    await user.click(await within(await screen.findByRole('article', { name: 'Draft sale' })).findByRole('button', { name: 'Send Now' }));
    expect(dialogs.confirms).toEqual(['Are you sure you want to send this notification?']);
    expect(api.callsTo('POST /api/notifications/d1/send')).toHaveLength(0);

    const accepted = captureDialogs(true);
    await user.click(within(card('Draft sale')).getByRole('button', { name: 'Send Now' }));
    await waitFor(() => expect(accepted.alerts).toEqual(['Notification sent successfully!']));
    expect(api.callsTo('POST /api/notifications/d1/send')[0]?.body).toBeUndefined();
    await waitFor(() => expect(within(card('Draft sale')).getByTestId('status-badge')).toHaveTextContent('Completed'));
  });

  it('Send Now failing alerts the server message', async () => {
    setUp({ [LIST]: list([draft]), 'POST /api/notifications/d1/send': fail(409, 'Only draft notifications can be sent now') });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/notifications');

    await user.click(await within(await screen.findByRole('article', { name: 'Draft sale' })).findByRole('button', { name: 'Send Now' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Only draft notifications can be sent now']));
  });

  it('Delete asks "Are you sure you want to delete this notification?" and removes it', async () => {
    let deleted = false;
    const api = setUp({
      [LIST]: () => list(deleted ? [scheduled] : [draft, scheduled]),
      'DELETE /api/notifications/d1': () => {
        deleted = true;
        return ok({ deleted: true });
      },
    });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/notifications');

    await user.click(await within(await screen.findByRole('article', { name: 'Draft sale' })).findByRole('button', { name: 'Delete' }));
    expect(dialogs.confirms).toEqual(['Are you sure you want to delete this notification?']);
    await waitFor(() => expect(screen.queryByRole('article', { name: 'Draft sale' })).not.toBeInTheDocument());
    expect(api.callsTo('DELETE /api/notifications/d1')).toHaveLength(1);
    expect(dialogs.alerts).toEqual([]);
  });

  it('Delete failing alerts the server message, else "Failed to delete notification"', async () => {
    setUp({ [LIST]: list([draft]), 'DELETE /api/notifications/d1': fail(409, 'This notification is already being sent') });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/notifications');

    await user.click(await within(await screen.findByRole('article', { name: 'Draft sale' })).findByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['This notification is already being sent']));

    mockApi({ [LIST]: list([draft]), 'DELETE /api/notifications/d1': { status: 500, text: '' } });
    await user.click(within(card('Draft sale')).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(dialogs.alerts[1]).toBe('Failed to delete notification'));
  });

  it('Cancel asks first and cancels a scheduled notification', async () => {
    let cancelledNow = false;
    const api = setUp({
      [LIST]: () => list([cancelledNow ? { ...scheduled, status: 'cancelled' } : scheduled]),
      'POST /api/notifications/s1/cancel': () => {
        cancelledNow = true;
        return ok({ notification: { ...scheduled, status: 'cancelled' } });
      },
    });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/notifications');

    await user.click(await within(await screen.findByRole('article', { name: 'Weekend promo' })).findByRole('button', { name: 'Cancel' }));
    expect(dialogs.confirms).toEqual(['Are you sure you want to cancel this scheduled notification?']);
    await waitFor(() => expect(within(card('Weekend promo')).getByTestId('status-badge')).toHaveTextContent('Cancelled'));
    expect(api.callsTo('POST /api/notifications/s1/cancel')).toHaveLength(1);
    expect(buttonsOf('Weekend promo')).toEqual(['View', 'Duplicate']);
  });

  it('Duplicate copies a completed notification into a draft and opens it for editing', async () => {
    const copy = makeNotification({ id: 'copy-1', title: 'Spring launch', status: 'draft' });
    const api = setUp({
      [LIST]: list([completed]),
      'POST /api/notifications/c1/duplicate': ok({ notification: copy }, 201),
      'GET /api/notifications/copy-1': ok({ notification: copy }),
      'GET /api/sites/site-1/segments': ok({ segments: [] }),
    });
    const { user, pathname } = renderApp('/notifications');

    await user.click(await within(await screen.findByRole('article', { name: 'Spring launch' })).findByRole('button', { name: 'Duplicate' }));
    await waitFor(() => expect(pathname()).toBe('/notifications/copy-1/edit'));
    expect(api.callsTo('POST /api/notifications/c1/duplicate')).toHaveLength(1);
    expect(await screen.findByRole('form', { name: 'Edit notification' })).toBeInTheDocument();
  });

  it('Pause and Resume switch a scheduled recurring notification’s active flag (spec §4) with PATCH recurring_schedule.is_active', async () => {
    let isActive = true;
    const weekly = () =>
      makeNotification({ ...recurring, status: 'scheduled', recurringSchedule: { ...recurring.recurringSchedule!, isActive } });
    const api = setUp({
      [LIST]: () => list([weekly()], { all: 1, scheduled: 1 }),
      'PATCH /api/notifications/r1': (call) => {
        isActive = (call.body as { recurring_schedule: { is_active: boolean } }).recurring_schedule.is_active;
        return ok({ notification: weekly() });
      },
    });
    const { user } = renderApp('/notifications');
    await screen.findByRole('article', { name: 'Daily digest' });
    expect(buttonsOf('Daily digest')).toEqual(['Edit', 'Pause', 'Cancel', 'Delete']);

    await user.click(within(card('Daily digest')).getByRole('button', { name: 'Pause' }));
    expect(await within(card('Daily digest')).findByRole('button', { name: 'Resume' })).toBeInTheDocument();
    expect(within(card('Daily digest')).getByText('(paused)')).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/notifications/r1')[0]!.body).toEqual({ recurring_schedule: { is_active: false } });

    await user.click(within(card('Daily digest')).getByRole('button', { name: 'Resume' }));
    expect(await within(card('Daily digest')).findByRole('button', { name: 'Pause' })).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/notifications/r1')[1]!.body).toEqual({ recurring_schedule: { is_active: true } });
  });

  it('Pause failing alerts the server message, else "Failed to pause notification"', async () => {
    const weekly = makeNotification({ ...recurring, status: 'scheduled' });
    setUp({ [LIST]: list([weekly], { all: 1, scheduled: 1 }), 'PATCH /api/notifications/r1': fail(500) });
    const dialogs = captureDialogs();
    const { user } = renderApp('/notifications');
    await user.click(within(await screen.findByRole('article', { name: 'Daily digest' })).getByRole('button', { name: 'Pause' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Failed to pause notification']));
  });

  it('Retry asks first and sends a failed notification again', async () => {
    const api = setUp({ [LIST]: list([failed]), 'POST /api/notifications/f1/retry': ok({ notification: { ...failed, status: 'sending', last_error: null } }) });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/notifications');

    await user.click(await within(await screen.findByRole('article', { name: 'Broken send' })).findByRole('button', { name: 'Retry' }));
    expect(dialogs.confirms[0]).toMatch(/^Are you sure you want to retry sending this notification/);
    await waitFor(() => expect(api.callsTo('POST /api/notifications/f1/retry')).toHaveLength(1));
  });

  it('Retry of an old send whose deliveries are totals now is disabled and says why (docs/product.md, old data)', async () => {
    const api = setUp({ [LIST]: list([{ ...failed, deliveries_compacted: true }]) });
    const { user } = renderApp('/notifications');
    const retry = await within(await screen.findByRole('article', { name: 'Broken send' })).findByRole('button', { name: 'Retry' });
    expect(retry).toBeDisabled();
    expect(retry).toHaveAttribute('title', expect.stringMatching(/totals now, so there is nothing left to retry\. Duplicate it to send it again\.$/));
    await user.click(retry);
    expect(api.callsTo('POST /api/notifications/f1/retry')).toHaveLength(0);
  });

  it('polls while a notification is sending and shows live progress until it completes', async () => {
    const responses = [
      { ...sending, counts: makeCounts({ targeted: 200, sent: 40, failed: 10, delivered: 30, clicked: 2 }) },
      { ...sending, counts: makeCounts({ targeted: 200, sent: 150, failed: 20, delivered: 120, clicked: 9 }) },
      { ...sending, status: 'completed_with_errors' as const, counts: makeCounts({ targeted: 200, sent: 175, failed: 25, delivered: 160, clicked: 12 }) },
    ];
    const api = setUp({ [LIST]: () => list([responses[Math.min(api.callsTo(LIST).length - 1, 2)]!]) });
    renderApp('/notifications');

    // Accepted, failed and pending apart: 10 failures are not "sent".
    const progress = await screen.findByTestId('sending-progress');
    expect(progress).toHaveTextContent('40 accepted · 10 failed · 150 pending of 200');
    const bar = within(progress).getByRole('progressbar', { name: 'Sending progress of Going out' });
    expect(bar).toHaveAttribute('aria-valuenow', '50');
    expect(bar).toHaveAttribute('aria-valuemax', '200');
    expect(progress.querySelector('[data-segment="sent"]')).toHaveStyle({ width: '20%' });
    expect(progress.querySelector('[data-segment="failed"]')).toHaveStyle({ width: '5%' });

    await waitFor(() => expect(screen.getByTestId('sending-progress')).toHaveTextContent('150 accepted · 20 failed · 30 pending of 200'), { timeout: 4000 });
    await waitFor(() => expect(within(card('Going out')).getByTestId('status-badge')).toHaveTextContent('Completed with errors'), { timeout: 4000 });
    expect(screen.queryByTestId('sending-progress')).not.toBeInTheDocument();

    // Nothing is sending any more: polling stops.
    const callsWhenDone = api.callsTo(LIST).length;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(api.callsTo(LIST)).toHaveLength(callsWhenDone);
  }, 15_000);

  it('shows the server message when the list cannot be loaded', async () => {
    setUp({ [LIST]: fail(404, 'Site not found') });
    renderApp('/notifications');

    expect(await screen.findByRole('alert')).toHaveTextContent('Site not found');
  });

  it('asks to choose a site when there is none', async () => {
    signIn();
    mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [] }) });
    renderApp('/notifications');

    expect(await screen.findByRole('heading', { name: 'No Site Selected' })).toBeInTheDocument();
  });
});
