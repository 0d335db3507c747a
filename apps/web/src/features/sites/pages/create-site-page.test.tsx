import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useSitesStore } from '../../../lib/sites-store';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const existing = makeSite({ id: 'old', name: 'Old Site' });

function setUp(createResponse: Parameters<typeof mockApi>[0][string]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [existing] }),
    'POST /api/sites': createResponse,
  });
}

describe('create site page (spec §2 /sites/new)', () => {
  it('offers the ten timezones and explains the VAPID keys and installation code', async () => {
    setUp(ok({}));
    renderApp('/sites/new');

    const timezone = await screen.findByRole('combobox', { name: 'Timezone' });
    expect([...(timezone as HTMLSelectElement).options].map((o) => o.value)).toEqual([
      'UTC',
      'America/New_York',
      'America/Chicago',
      'America/Denver',
      'America/Los_Angeles',
      'Europe/London',
      'Europe/Paris',
      'Asia/Tokyo',
      'Asia/Shanghai',
      'Australia/Sydney',
    ]);
    expect(screen.getByText(/Unique VAPID keys/)).toBeInTheDocument();
    expect(screen.getByText(/An installation code/)).toBeInTheDocument();
    expect(screen.getByLabelText(/^Website URL/)).toHaveAttribute('type', 'url');
    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument(); // no shell here
  });

  it('requires a name and URL before sending anything', async () => {
    const api = setUp(ok({}));
    const { user } = renderApp('/sites/new');

    await user.click(await screen.findByRole('button', { name: 'Create Site' }));

    expect(await screen.findByText('Site name is required')).toBeInTheDocument();
    expect(screen.getByText('Website URL is required')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites')).toHaveLength(0);
  });

  it('creates the site, makes it current, alerts "Site created successfully!" and goes to /dashboard', async () => {
    const created = makeSite({ id: 'new', name: 'Acme Blog', url: 'https://blog.acme.example' });
    const api = setUp(ok({ site: created }, 201));
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/sites/new');

    await user.type(await screen.findByLabelText(/^Site Name/), 'Acme Blog');
    await user.type(screen.getByLabelText(/^Website URL/), 'https://blog.acme.example');
    await user.type(screen.getByLabelText(/^Notification Icon URL/), 'https://blog.acme.example/icon.png');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Timezone' }), 'Asia/Tokyo');
    await user.click(screen.getByRole('button', { name: 'Create Site' }));

    await waitFor(() => expect(pathname()).toBe('/dashboard'));
    expect(dialogs.alerts).toEqual(['Site created successfully!']);
    expect(api.callsTo('POST /api/sites')[0]?.body).toEqual({
      name: 'Acme Blog',
      url: 'https://blog.acme.example',
      settings: { icon: 'https://blog.acme.example/icon.png', timezone: 'Asia/Tokyo' },
    });
    expect(useSitesStore.getState().currentSite).toEqual(created);
    expect(useSitesStore.getState().sites.map((s) => s.id)).toEqual(['old', 'new']);
  });

  it("alerts the server's message, else \"Failed to create site\"", async () => {
    setUp(fail(400, 'Must be a complete URL starting with https:// or http://'));
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/sites/new');

    await user.type(await screen.findByLabelText(/^Site Name/), 'Acme');
    await user.type(screen.getByLabelText(/^Website URL/), 'https://acme.example');
    await user.click(screen.getByRole('button', { name: 'Create Site' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Must be a complete URL starting with https:// or http://']));

    mockApi({ 'POST /api/sites': { status: 500, text: '' } });
    await user.click(screen.getByRole('button', { name: 'Create Site' }));
    await waitFor(() => expect(dialogs.alerts[1]).toBe('Failed to create site'));
    expect(pathname()).toBe('/sites/new');
  });
});
