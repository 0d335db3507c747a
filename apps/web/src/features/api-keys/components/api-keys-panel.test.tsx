import type { ApiKey, Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const site = makeSite({ id: 'site-1', name: 'Acme Store', settings: { ...makeSite().settings, timezone: 'Europe/Paris' } });

const existing: ApiKey = { id: 'key-1', name: 'Shop backend', prefix: 'hk_3fA9x2Qe', created_at: '2026-03-01T08:00:00.000Z', last_used_at: null };
const used: ApiKey = { id: 'key-2', name: 'CRM sync', prefix: 'hk_Zz81kLmN', created_at: '2026-03-02T08:00:00.000Z', last_used_at: '2026-03-05T17:30:00.000Z' };
const SECRET = 'hk_NEWsecretKeyValue0123456789abcdefghijklmnopq';

function setUp(keys: ApiKey[], extra: Parameters<typeof mockApi>[0] = {}, sites: Site[] = [site]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites }),
    'GET /api/sites/site-1/api-keys': ok({ api_keys: keys }),
    ...extra,
  });
}

describe('Settings → API Keys', () => {
  it('is a tab of Settings, linkable with ?tab=api-keys', async () => {
    setUp([existing]);
    const { user, router } = renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'API Keys' }));
    expect(router.state.location.search).toBe('?tab=api-keys');
    expect(screen.getByRole('tabpanel', { name: 'API Keys' })).toBeInTheDocument();
    expect(await screen.findByText('Shop backend')).toBeInTheDocument();
  });

  it('lists keys by name and first characters, with dates in the site timezone, never the key itself', async () => {
    setUp([existing, used]);
    renderApp('/settings?tab=api-keys');

    const list = await screen.findByRole('list', { name: 'API keys' });
    const rows = within(list).getAllByRole('listitem');
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByText('Shop backend')).toBeInTheDocument();
    expect(within(rows[0]!).getByText('hk_3fA9x2Qe…')).toBeInTheDocument();
    expect(rows[0]).toHaveTextContent('Created Mar 1, 2026, 9:00 AM · Last used Never');
    expect(rows[1]).toHaveTextContent('Last used Mar 5, 2026, 6:30 PM');
  });

  it('creates a key, shows it once with a copy button and a warning, then hides it for good', async () => {
    const api = setUp([existing], {
      'POST /api/sites/site-1/api-keys': (call) =>
        ok(
          {
            api_key: { id: 'key-3', name: (call.body as { name: string }).name, prefix: SECRET.slice(0, 11), created_at: '2026-03-06T10:00:00.000Z', last_used_at: null },
            key: SECRET,
          },
          201,
        ),
    });
    const { user } = renderApp('/settings?tab=api-keys');

    await user.type(await screen.findByLabelText(/^Key name/), '  Billing worker ');
    await user.click(screen.getByRole('button', { name: 'Create API Key' }));

    const notice = await screen.findByRole('region', { name: /Your new API key/ });
    expect(api.callsTo('POST /api/sites/site-1/api-keys')[0]?.body).toEqual({ name: 'Billing worker' });
    expect(within(notice).getByText(SECRET)).toBeInTheDocument();
    expect(within(notice).getByText('Copy this key now: it will not be shown again')).toBeInTheDocument();
    expect(screen.getByLabelText(/^Key name/)).toHaveValue('');

    await user.click(within(notice).getByRole('button', { name: 'Copy API key Billing worker' }));
    expect(await navigator.clipboard.readText()).toBe(SECRET);

    // The list shows the new key by its first characters only.
    const rows = within(screen.getByRole('list', { name: 'API keys' })).getAllByRole('listitem');
    expect(rows.map((row) => within(row).getByText(/^hk_/).textContent)).toEqual(['hk_3fA9x2Qe…', 'hk_NEWsecre…']);

    await user.click(within(notice).getByRole('button', { name: 'I have copied the key' }));
    expect(screen.queryByText(SECRET)).not.toBeInTheDocument();
    expect(document.body.textContent).not.toContain(SECRET);
  });

  it('requires a name before sending, and shows the server message when creating fails', async () => {
    const api = setUp([], { 'POST /api/sites/site-1/api-keys': fail(400, 'Name must be at most 100 characters') });
    const { user } = renderApp('/settings?tab=api-keys');

    await user.click(await screen.findByRole('button', { name: 'Create API Key' }));
    expect(await screen.findByText('Name is required')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/api-keys')).toHaveLength(0);

    await user.type(screen.getByLabelText(/^Key name/), 'Backend');
    await user.click(screen.getByRole('button', { name: 'Create API Key' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Name must be at most 100 characters');
  });

  it('revokes a key only after confirming', async () => {
    const api = setUp([existing, used], { 'DELETE /api/api-keys/key-1': ok({ revoked: true }) });
    const declined = captureDialogs(false);
    const { user } = renderApp('/settings?tab=api-keys');

    await user.click(await screen.findByRole('button', { name: 'Revoke Shop backend' }));
    expect(declined.confirms).toEqual(['Are you sure you want to revoke the API key "Shop backend"? Requests that use it will be refused at once.']);
    expect(api.callsTo('DELETE /api/api-keys/key-1')).toHaveLength(0);

    captureDialogs(true);
    await user.click(screen.getByRole('button', { name: 'Revoke Shop backend' }));
    await waitFor(() => expect(screen.queryByText('Shop backend')).not.toBeInTheDocument());
    expect(api.callsTo('DELETE /api/api-keys/key-1')).toHaveLength(1);
    expect(screen.getByText('CRM sync')).toBeInTheDocument();
  });

  it('alerts the server message when revoking fails and keeps the key listed', async () => {
    setUp([existing], { 'DELETE /api/api-keys/key-1': fail(404, 'API key not found') });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/settings?tab=api-keys');

    await user.click(await screen.findByRole('button', { name: 'Revoke Shop backend' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['API key not found']));
    expect(screen.getByText('Shop backend')).toBeInTheDocument();
  });

  it('says when there are no keys yet', async () => {
    setUp([]);
    renderApp('/settings?tab=api-keys');
    expect(await screen.findByRole('heading', { name: 'No API keys yet' })).toBeInTheDocument();
  });

  it('offers a retry when the list fails to load', async () => {
    let calls = 0;
    setUp([], {
      'GET /api/sites/site-1/api-keys': () => {
        calls += 1;
        // The query client retries once (spec §9) before showing the error.
        return calls <= 2 ? fail(500, 'Database unavailable') : ok({ api_keys: [existing] });
      },
    });
    const { user } = renderApp('/settings?tab=api-keys');
    expect(await screen.findByRole('alert', undefined, { timeout: 3000 })).toHaveTextContent('Database unavailable');
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('Shop backend')).toBeInTheDocument();
  });
});
