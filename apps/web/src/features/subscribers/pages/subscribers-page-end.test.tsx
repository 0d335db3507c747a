import type { Subscriber } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const site = makeSite({ id: 'site-1' });
const LIST = 'GET /api/sites/site-1/subscribers';

function makeSubscriber(overrides: Partial<Subscriber> = {}): Subscriber {
  return {
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
    ...overrides,
  };
}

describe('subscribers page after the last row of the last page goes', () => {
  it('erasing the only subscriber of page 2 does not leave "No subscribers yet" and "Page 2 of 1" on screen while 50 remain', async () => {
    let total = 51;
    let lastErased = false;
    signIn();
    mockApi({
      'GET /api/auth/me': ok({ user: makeUser() }),
      'GET /api/sites': ok({ sites: [site] }),
      [LIST]: (call) => {
        const page = Number(call.url.searchParams.get('page'));
        if (page === 1) {
          const subscribers = Array.from({ length: 50 }, (_, i) => makeSubscriber({ id: `p1-${i}` }));
          return ok({ subscribers, total, page: 1, limit: 50, cursors: { next: 'c-next', previous: 'c-prev' } });
        }
        const subscribers = lastErased ? [] : [makeSubscriber({ id: 'last' })];
        return ok({ subscribers, total, page, limit: 50, cursors: lastErased ? { next: null, previous: null } : { next: 'c2-next', previous: 'c2-prev' } });
      },
      'DELETE /api/subscribers/last': () => {
        lastErased = true;
        total = 50;
        return ok({ erased: { id: 'last', deliveries: 3, events: 1 } });
      },
    });
    captureDialogs();
    const { user } = renderApp('/subscribers');
    const pager = await screen.findByRole('navigation', { name: 'Pagination' });
    expect(pager).toHaveTextContent('Page 1 of 2');
    await user.click(within(pager).getByRole('button', { name: 'Next' }));
    const row = await screen.findByTestId('subscriber-last');
    await user.click(within(row).getByRole('button', { name: 'Erase completely' }));
    await waitFor(() => expect(lastErased).toBe(true));
    await waitFor(() => expect(screen.getByTestId('subscriber-total')).toHaveTextContent('50 subscribers'));

    // 50 subscribers remain: the page must not claim there are none, nor be page 2 of 1.
    await waitFor(() => expect(screen.queryByText('No subscribers yet')).not.toBeInTheDocument(), { timeout: 3000 });
    expect(screen.queryByText('Page 2 of 1')).not.toBeInTheDocument();
  });
});
