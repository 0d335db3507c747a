import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { TOKEN_STORAGE_KEY, useAuthStore } from '../lib/auth-store';
import { deferred, mockApi, ok } from '../test/fetch-mock';
import { makeUser, signIn } from '../test/fixtures';
import { renderApp } from '../test/render-app';

describe('protected routes (spec §2)', () => {
  it('sends visitors without a session to /login, replacing the history entry', async () => {
    const api = mockApi({});
    const { router, pathname } = renderApp('/settings');

    expect(await screen.findByRole('heading', { name: 'Sign in to Herald' })).toBeInTheDocument();
    expect(pathname()).toBe('/login');
    expect(router.state.historyAction).toBe('REPLACE');
    expect(api.calls).toHaveLength(0);
  });

  it('shows a full-screen "Loading..." while a stored token is turned back into a session', async () => {
    localStorage.setItem(TOKEN_STORAGE_KEY, 'stored-token');
    await useAuthStore.persist.rehydrate();
    const me = deferred();
    const api = mockApi({ 'GET /api/auth/me': () => me.promise, 'GET /api/sites': ok({ sites: [] }) });
    renderApp('/settings');

    expect(await screen.findByText('Loading...')).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Settings' })).not.toBeInTheDocument();

    me.resolve(ok({ user: makeUser({ name: 'Restored User' }) }));
    expect(await screen.findByRole('heading', { name: 'Settings' })).toBeInTheDocument();
    expect(screen.getByTestId('user-name')).toHaveTextContent('Restored User');
    expect(api.callsTo('GET /api/auth/me')[0]?.headers.get('authorization')).toBe('Bearer stored-token');
  });

  it('renders at once for a restored session and loads the site list', async () => {
    signIn();
    const api = mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [] }) });
    renderApp('/settings');

    expect(await screen.findByRole('heading', { name: 'Settings' })).toBeInTheDocument();
    expect(screen.queryByText('Loading...')).not.toBeInTheDocument();
    expect(await screen.findByText('No sites yet')).toBeInTheDocument();
    expect(api.callsTo('GET /api/sites')).toHaveLength(1);
  });

  it('goes to /login when the stored token has expired (401)', async () => {
    signIn(makeUser(), 'expired');
    mockApi({ 'GET /api/auth/me': { status: 401, body: { success: false, error: { message: 'Session expired' } } }, 'GET /api/sites': ok({ sites: [] }) });
    const { pathname } = renderApp('/settings');

    expect(await screen.findByRole('heading', { name: 'Sign in to Herald' })).toBeInTheDocument();
    expect(pathname()).toBe('/login');
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
    expect(useAuthStore.getState().isAuthenticated).toBe(false);
  });
});
