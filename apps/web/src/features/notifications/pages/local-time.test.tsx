import type { Notification } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { makeCounts, makeNotification, makePerformance } from '../../../test/notification-fixtures';

// Issue 14 items 1 and 4 in the dashboard: the form's "at the same local time
// in each subscriber's zone", "Send anyway during quiet hours", the zone
// progress on the list and the page, and the deferred line of the report.
const NOW = new Date('2026-03-01T12:00:00.000Z');
beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const site = makeSite({ id: 'site-1', name: 'Acme Store', url: 'https://shop.acme.example', settings: { ...makeSite().settings, timezone: 'America/New_York' } });
const CREATE = 'POST /api/sites/site-1/notifications';

function setUp(routes: Parameters<typeof mockApi>[0] = {}) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-1/segments': ok({ segments: [] }),
    ...routes,
  });
}

const created = (call: { body: unknown }) => ok({ notification: makeNotification({ ...(call.body as Partial<Notification>), id: 'new-1', status: 'draft' }) }, 201);

const zoned = makeNotification({
  id: 'z1',
  title: 'Good morning',
  status: 'sending',
  delivery: { mode: 'subscriber_local_time', local_time: '09:00' },
  local_time_progress: { zones: 24, zones_sent: 7 },
  quiet_hours_deferred: 12,
  counts: makeCounts({ targeted: 300, sent: 290, failed: 10 }),
});

describe('local-time delivery and quiet hours in the dashboard', () => {
  it('the form sends the local time and "send anyway", checks the time, and leaves them out while unused', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await user.type(await screen.findByLabelText(/^Title/), 'Good morning');
    await user.type(screen.getByLabelText(/^Message/), 'Coffee is on us');
    await user.type(screen.getByLabelText(/^Destination URL/), 'https://shop.acme.example/coffee');
    const local = screen.getByRole('switch', { name: "At the same local time in each subscriber's zone" });
    expect(local).toHaveAttribute('aria-checked', 'false');
    await user.click(local);
    expect(screen.getByText(/America\/New_York for those without one/)).toBeInTheDocument();
    const time = screen.getByLabelText(/^Local time/);
    expect(time).toHaveValue('09:00');
    await user.clear(time);
    await user.click(screen.getByRole('button', { name: 'Create Notification' }));
    expect(await screen.findByText('Pick the local time, e.g. 09:00')).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);
    await user.type(time, '08:30');
    await user.click(screen.getByRole('switch', { name: 'Send anyway during quiet hours' }));
    await user.click(screen.getByRole('button', { name: 'Create Notification' }));
    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[0]?.body).toMatchObject({ delivery: { mode: 'subscriber_local_time', local_time: '08:30' }, quiet_hours_exempt: true });
  });

  it('an A/B test cannot be sent at local time: the form says so before saving', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user } = renderApp('/notifications/new');
    await user.type(await screen.findByLabelText(/^Title/), 'Morning test');
    await user.type(screen.getByLabelText(/^Message/), 'Which one?');
    await user.type(screen.getByLabelText(/^Destination URL/), 'https://shop.acme.example/');
    await user.click(screen.getByRole('switch', { name: "At the same local time in each subscriber's zone" }));
    await user.click(screen.getByRole('switch', { name: 'A/B test this notification' }));
    await user.type(screen.getByLabelText(/^Variant B title/), 'Other');
    await user.type(screen.getByLabelText(/^Variant B message/), 'Other message');
    await user.type(screen.getByLabelText(/^Variant B destination URL/), 'https://shop.acme.example/b');
    await user.click(screen.getByRole('button', { name: 'Create Notification' }));
    expect(await screen.findByText('An A/B test is sent to the whole audience at once: turn off the local time, or the A/B test')).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);
  });

  it('a notification that does not use them sends neither', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await user.type(await screen.findByLabelText(/^Title/), 'Plain');
    await user.type(screen.getByLabelText(/^Message/), 'At once');
    await user.type(screen.getByLabelText(/^Destination URL/), 'https://shop.acme.example/');
    await user.click(screen.getByRole('button', { name: 'Create Notification' }));
    await waitFor(() => expect(pathname()).toBe('/notifications'));
    const body = api.callsTo(CREATE)[0]?.body as Record<string, unknown>;
    expect(body).not.toHaveProperty('delivery');
    expect(body).not.toHaveProperty('quiet_hours_exempt');
  });

  it('editing loads the local time and "send anyway"; turning local time off sends at_once', async () => {
    const saved = makeNotification({ id: 'n-1', status: 'draft', delivery: { mode: 'subscriber_local_time', local_time: '18:45' }, quiet_hours_exempt: true });
    const api = setUp({ 'GET /api/notifications/n-1': ok({ notification: saved }), 'PATCH /api/notifications/n-1': ok({ notification: saved }) });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/n-1/edit');
    const local = await screen.findByRole('switch', { name: "At the same local time in each subscriber's zone" });
    expect(local).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByLabelText(/^Local time/)).toHaveValue('18:45');
    expect(screen.getByRole('switch', { name: 'Send anyway during quiet hours' })).toHaveAttribute('aria-checked', 'true');
    await user.click(local);
    await user.click(screen.getByRole('button', { name: /^(Update|Save)/ }));
    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo('PATCH /api/notifications/n-1')[0]?.body).toMatchObject({ delivery: { mode: 'at_once' }, quiet_hours_exempt: true });
  });

  it('a local-time send waiting for its first zone says so instead of "Preparing recipients..."', async () => {
    const waiting = { ...zoned, local_time_progress: { zones: 24, zones_sent: 0 }, counts: makeCounts({}) };
    setUp({ 'GET /api/sites/site-1/notifications': ok({ notifications: [waiting], counts: { all: 1, sending: 1 } }) });
    renderApp('/notifications');
    const row = await screen.findByTestId('notification-z1');
    expect(within(row).getByTestId('local-time-badge')).toHaveTextContent('Local time 09:00 — 0 of 24 zones sent');
    expect(within(row).getByTestId('sending-progress')).toHaveTextContent("Waiting for the first zone's local time");
  });

  it('the list and the page show the zones sent so far, and the page offers Cancel for the zones not yet due', async () => {
    setUp({
      'GET /api/sites/site-1/notifications': ok({ notifications: [zoned], counts: { all: 1, sending: 1 } }),
      'GET /api/notifications/z1': ok({ notification: zoned }),
      'GET /api/notifications/z1/performance': ok({ ...makePerformance({ counts: zoned.counts }), status: 'sending', skipped: { inactive: 0, frequency_cap: 0, quiet_hours_deferred: 12 } }),
    });
    const { unmount } = renderApp('/notifications');
    const row = await screen.findByTestId('notification-z1');
    expect(within(row).getByTestId('local-time-badge')).toHaveTextContent('Local time 09:00 — 7 of 24 zones sent');
    expect(within(row).getByTestId('sending-progress')).toHaveTextContent('290 accepted · 10 failed of 300');
    expect(within(row).getByTestId('quiet-hours-badge')).toHaveTextContent('12 deferred for quiet hours');
    unmount();

    renderApp('/notifications/z1');
    expect(await screen.findByTestId('local-time-badge')).toHaveTextContent('Local time 09:00 — 7 of 24 zones sent');
    expect(screen.getByRole('button', { name: 'Cancel' })).toBeInTheDocument();
    expect(await screen.findByTestId('quiet-hours-deferred')).toHaveTextContent(
      "Deferred: 12 subscribers were inside the site's quiet hours when it was due: they will be sent when the window ends in their time zone, and only then join the counts above.",
    );
  });

  it('a send holding zones for quiet hours offers Cancel while it sends; a send not split by zone does not', async () => {
    const held = makeNotification({ id: 'q1', title: 'Flash sale', status: 'sending', quiet_hours_deferred: 2, counts: makeCounts({ targeted: 3, sent: 3 }) });
    const plain = makeNotification({ id: 'p1', title: 'Now', status: 'sending', counts: makeCounts({ targeted: 3, sent: 1 }) });
    const performance = (notification: Notification) => ok({ ...makePerformance({ counts: notification.counts }), status: 'sending' });
    setUp({
      'GET /api/notifications/q1': ok({ notification: held }),
      'GET /api/notifications/q1/performance': performance(held),
      'GET /api/notifications/p1': ok({ notification: plain }),
      'GET /api/notifications/p1/performance': performance(plain),
    });
    const { unmount } = renderApp('/notifications/q1');
    expect(await screen.findByRole('button', { name: 'Cancel' })).toBeInTheDocument();
    unmount();
    renderApp('/notifications/p1');
    expect(await screen.findByRole('heading', { name: 'Now' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Cancel' })).not.toBeInTheDocument();
  });
});
