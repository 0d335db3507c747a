import { act, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../test/fixtures';
import { captureDialogs, renderApp } from '../test/render-app';

// The three target selects (notification, welcome campaign, RSS feed) share
// one query of the site's segments; a segment created on the Segments page
// is offered by all three afterwards.

const SEGMENTS = 'GET /api/sites/site-1/segments';

const stored = (id: string, name: string, estimated_count: number) => ({
  id,
  site_id: 'site-1',
  name,
  rules: { browser: 'Firefox' },
  estimated_count,
  created_at: '2026-03-01T00:00:00.000Z',
  updated_at: '2026-03-01T00:00:00.000Z',
});

const targetOptions = async () => {
  const select = (await screen.findByRole('combobox', { name: 'Target Segment' })) as HTMLSelectElement;
  return [...select.options].map((o) => o.textContent);
};

describe('segment options shared by the target selects', () => {
  it('are fetched once for the three forms, and a segment created on the Segments page appears in all of them', async () => {
    signIn();
    const dialogs = captureDialogs();
    const segments = [stored('seg-1', 'Night owls', 7)];
    const api = mockApi({
      'GET /api/auth/me': ok({ user: makeUser() }),
      'GET /api/sites': ok({ sites: [makeSite()] }),
      'GET /api/sites/site-1/rss-feeds': ok({ feeds: [] }),
      [SEGMENTS]: () => ok({ segments: [...segments] }),
      'POST /api/sites/site-1/segments': () => {
        const created = stored('seg-2', 'Firefox fans', 42);
        segments.unshift(created);
        return ok({ segment: created }, 201);
      },
    });
    const { router, user } = renderApp('/notifications/new');
    const go = (path: string) => act(() => router.navigate(path));

    await waitFor(async () => expect(await targetOptions()).toEqual(['All Subscribers', 'Night owls (7)']));
    await go('/campaigns/new');
    expect(await targetOptions()).toEqual(['All Subscribers', 'Night owls (7)']);
    await go('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));
    expect(await targetOptions()).toEqual(['All Subscribers', 'Night owls (7)']);
    // One fetch served all three forms.
    expect(api.callsTo(SEGMENTS)).toHaveLength(1);

    await go('/segments');
    await user.click(await screen.findByRole('button', { name: '+ New Segment' }));
    const form = screen.getByRole('form', { name: 'New Segment' });
    await user.type(within(form).getByLabelText(/^Segment Name/), 'Firefox fans');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Browser' }), 'Firefox');
    await user.click(within(form).getByRole('button', { name: 'Create Segment' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Segment created successfully!']));

    const withNew = ['All Subscribers', 'Firefox fans (42)', 'Night owls (7)'];
    await go('/notifications/new');
    await waitFor(async () => expect(await targetOptions()).toEqual(withNew));
    await go('/campaigns/new');
    expect(await targetOptions()).toEqual(withNew);
    await go('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));
    expect(await targetOptions()).toEqual(withNew);
  });
});
