import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { TOKEN_STORAGE_KEY, useAuthStore } from '../../../lib/auth-store';
import { deferred, fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeUser } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';

async function fillAndSubmit(user: ReturnType<typeof renderApp>['user']) {
  await user.type(await screen.findByLabelText(/^Email/), 'ada@example.com');
  await user.type(screen.getByLabelText(/^Password/), 'correct horse');
  await user.click(screen.getByRole('button', { name: 'Sign In' }));
}

describe('login page (spec §2 /login, §8)', () => {
  it('shows "Signing in..." while pending, then stores the session and goes to /dashboard', async () => {
    const response = deferred();
    const api = mockApi({ 'POST /api/auth/login': () => response.promise });
    const { user, pathname } = renderApp('/login');

    await fillAndSubmit(user);

    expect(await screen.findByRole('button', { name: 'Signing in...' })).toBeDisabled();
    expect(api.calls[0]?.body).toEqual({ email: 'ada@example.com', password: 'correct horse' });

    response.resolve(ok({ user: makeUser(), token: 'new-token' }));
    expect(await screen.findByRole('heading', { name: 'Dashboard', level: 1 })).toBeInTheDocument();
    expect(pathname()).toBe('/dashboard');
    expect(useAuthStore.getState()).toMatchObject({ isAuthenticated: true, token: 'new-token', user: makeUser() });
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBe('new-token');
  });

  it("shows the server's message and stays on /login when the password is wrong", async () => {
    mockApi({ 'POST /api/auth/login': fail(401, 'Invalid email or password') });
    const { user, pathname } = renderApp('/login');

    await fillAndSubmit(user);

    expect(await screen.findByRole('alert')).toHaveTextContent('Invalid email or password');
    expect(pathname()).toBe('/login');
    expect(screen.getByRole('button', { name: 'Sign In' })).toBeEnabled();
  });

  it('falls back to "Login failed. Please try again." without a server message', async () => {
    mockApi({ 'POST /api/auth/login': { status: 500, text: 'upstream exploded' } });
    const { user } = renderApp('/login');

    await fillAndSubmit(user);

    expect(await screen.findByRole('alert')).toHaveTextContent('Login failed. Please try again.');
  });

  it('links to /forgot-password and shows sign-up as coming soon', async () => {
    renderApp('/login');

    expect(await screen.findByRole('link', { name: 'Forgot password?' })).toHaveAttribute('href', '/forgot-password');
    expect(screen.getByRole('button', { name: 'Sign up (Coming Soon)' })).toBeDisabled();
  });

  it('returns to the protected page that sent the visitor to sign in', async () => {
    mockApi({
      'POST /api/auth/login': ok({ user: makeUser(), token: 't' }),
      'GET /api/auth/me': ok({ user: makeUser() }),
      'GET /api/sites': ok({ sites: [] }),
    });
    const { user, pathname } = renderApp('/settings');

    await fillAndSubmit(user);

    expect(await screen.findByRole('heading', { level: 1, name: 'Settings' })).toBeInTheDocument();
    expect(pathname()).toBe('/settings');
  });
});
