import type { SiteEvent } from '@herald/contracts';
import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';

const site = makeSite({ id: 'site-42', name: 'Acme Store', settings: { ...makeSite().settings, timezone: 'America/New_York' } });

const events: SiteEvent[] = [
  {
    id: 'e2',
    event: 'order_shipped',
    source: 'api',
    subscriber_id: null,
    external_id: 'customer-42',
    data: { order: 1001 },
    idempotency_key: 'order-1001-shipped',
    subscribers: 2,
    triggered: 2,
    received_at: '2026-03-05T15:00:00.000Z',
  },
  {
    id: 'e1',
    event: 'cart_abandoned',
    source: 'browser',
    subscriber_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    external_id: null,
    data: null,
    idempotency_key: null,
    subscribers: 1,
    triggered: 0,
    received_at: '2026-03-05T14:00:00.000Z',
  },
];

function setUp(list: SiteEvent[]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-42/events': ok({ events: list }),
  });
}

describe('Settings → Automation', () => {
  it('explains both ways events reach Herald, with the site id and this Herald’s address in the curl example', async () => {
    setUp([]);
    renderApp('/settings?tab=automation');

    expect(await screen.findByRole('heading', { name: 'How automation works' })).toBeInTheDocument();
    const browser = screen.getByRole('figure', { name: 'Browser example' });
    expect(browser).toHaveTextContent("herald.track('cart_abandoned', { items: 2, total: 49.5 });");
    expect(browser).toHaveTextContent("herald.identify('customer-42', identityHashFromYourServer);");
    const curl = screen.getByRole('figure', { name: 'curl example' });
    expect(curl).toHaveTextContent(`curl -X POST ${window.location.origin}/api/v1/sites/site-42/events`);
    expect(curl).toHaveTextContent('-H "Authorization: Bearer $HERALD_API_KEY"');
    expect(curl).toHaveTextContent('"event":"order_shipped","external_id":"customer-42"');
  });

  it('lists recent events newest first: name, source, who, what it triggered, when (site timezone)', async () => {
    const api = setUp(events);
    renderApp('/settings?tab=automation');

    const list = await screen.findByRole('list', { name: 'Recent events' });
    const rows = within(list).getAllByRole('listitem');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent('order_shipped');
    expect(within(rows[0]!).getByText('API')).toBeInTheDocument();
    expect(rows[0]).toHaveTextContent('User customer-42 · 2 notifications scheduled');
    expect(rows[0]).toHaveTextContent('{"order":1001}');
    expect(rows[0]).toHaveTextContent('Mar 5, 2026, 10:00 AM');
    expect(within(rows[1]!).getByText('Browser')).toBeInTheDocument();
    expect(rows[1]).toHaveTextContent('Subscriber 7c9e6679 · No notification sent');
    expect(api.callsTo('GET /api/sites/site-42/events')[0]?.url.searchParams.get('limit')).toBe('50');
  });

  it('says when no event has arrived yet', async () => {
    setUp([]);
    renderApp('/settings?tab=automation');
    expect(await screen.findByRole('heading', { name: 'No events received yet' })).toBeInTheDocument();
  });

  it('refreshes the list on request', async () => {
    const api = setUp(events);
    const { user } = renderApp('/settings?tab=automation');
    await screen.findByRole('list', { name: 'Recent events' });
    await user.click(screen.getByRole('button', { name: 'Refresh' }));
    await screen.findByRole('list', { name: 'Recent events' });
    expect(api.callsTo('GET /api/sites/site-42/events').length).toBeGreaterThanOrEqual(2);
  });
});
