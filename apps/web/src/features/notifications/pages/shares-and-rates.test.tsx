import type { Notification } from '@herald/contracts';
import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';
import { makeCounts, makeNotification, makePerformance } from '../../../test/notification-fixtures';

// shares and rates as the screens write them.

const site = makeSite({ id: 'site-1' });
const LIST = 'GET /api/sites/site-1/notifications';

function setUp(routes: Parameters<typeof mockApi>[0]) {
  signIn();
  return mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [site] }), ...routes });
}
const list = (notifications: Notification[]) => ok({ notifications, counts: { all: notifications.length } });

describe('failure shares are never rounded to 0% or 100%', () => {
  it('one failure out of 20,000 is not written "(0%)"', async () => {
    const oneFailed = makeNotification({
      id: 'e1',
      title: 'Big send',
      status: 'completed_with_errors',
      sent_at: '2026-03-01T15:00:00.000Z',
      counts: makeCounts({ targeted: 20_000, sent: 19_999, failed: 1, delivered: 19_000, clicked: 500 }),
    });
    setUp({ [LIST]: list([oneFailed]) });
    renderApp('/notifications');
    const card = await screen.findByRole('article', { name: 'Big send' });
    expect(within(card).getByTestId('failure-reason')).toHaveTextContent('1 of 20,000 failed');
    // Shown today: "1 of 20,000 failed (0%)" and "Failed 1 (0%)": a failure reported as a zero share.
    expect(within(card).getByTestId('failure-reason')).not.toHaveTextContent('(0%)');
    expect(within(card).getByTestId('outcome-failed')).not.toHaveTextContent('(0%)');
  });

  it('19,999 failures out of 20,000 (one accepted) are not written "(100%)"', async () => {
    const almostAll = makeNotification({
      id: 'e2',
      title: 'Nearly all failed',
      status: 'completed_with_errors',
      sent_at: '2026-03-01T15:00:00.000Z',
      counts: makeCounts({ targeted: 20_000, sent: 1, failed: 19_999, delivered: 1 }),
    });
    setUp({ [LIST]: list([almostAll]) });
    renderApp('/notifications');
    const card = await screen.findByRole('article', { name: 'Nearly all failed' });
    expect(within(card).getByTestId('failure-reason')).toHaveTextContent('19,999 of 20,000 failed');
    expect(within(card).getByTestId('failure-reason')).not.toHaveTextContent('(100%)');
  });

  it('the notification page’s "Completed with errors" title does not say 0% for a real failure', async () => {
    const oneFailed = makeNotification({
      id: 'e1',
      title: 'Big send',
      status: 'completed_with_errors',
      sent_at: '2026-03-01T15:00:00.000Z',
      counts: makeCounts({ targeted: 20_000, sent: 19_999, failed: 1, delivered: 19_000, clicked: 500 }),
    });
    setUp({
      'GET /api/notifications/e1': ok({ notification: oneFailed }),
      'GET /api/notifications/e1/performance': ok(makePerformance({ notification_id: 'e1', status: 'completed_with_errors', counts: oneFailed.counts })),
    });
    renderApp('/notifications/e1');
    expect(await screen.findByText(/^Completed with errors: 1 of 20,000 failed/)).toBeInTheDocument();
    expect(screen.queryByText('Completed with errors: 1 of 20,000 failed (0%)')).not.toBeInTheDocument();
  });
});

describe('a click rate with nothing delivered', () => {
  it('the list card writes "—" like the notification page, not "0%", when nothing was delivered', async () => {
    // Every subscriber had the frequency cap: nothing delivered, so there is no click rate (docs/product.md §9).
    const capped = makeNotification({
      id: 'k1',
      title: 'Capped send',
      status: 'completed',
      sent_at: null,
      counts: makeCounts({ targeted: 100, skipped: 100 }),
    });
    setUp({ [LIST]: list([capped]) });
    renderApp('/notifications');
    const card = await screen.findByRole('article', { name: 'Capped send' });
    expect(within(card).getByTestId('outcome-click-rate')).toHaveTextContent('—');
  });
});

describe('a send held only by quiet hours', () => {
  it('does not say it waits for a "local time" when it is not a local-time send', async () => {
    // Delivery "at once"; every subscriber is inside the site's quiet hours, so the send is split by zone and nothing is targeted yet.
    const held = makeNotification({
      id: 'q1',
      title: 'Night sale',
      status: 'sending',
      delivery: { mode: 'at_once', local_time: null },
      local_time_progress: { zones: 3, zones_sent: 0 },
      quiet_hours_deferred: 120,
      counts: makeCounts(),
    });
    setUp({ [LIST]: list([held]) });
    renderApp('/notifications');
    const card = await screen.findByRole('article', { name: 'Night sale' });
    expect(within(card).getByTestId('quiet-hours-badge')).toHaveTextContent('120 deferred for quiet hours');
    expect(within(card).getByTestId('sending-progress')).not.toHaveTextContent(/local time/i);
  });
});
